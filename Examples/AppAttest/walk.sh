#!/usr/bin/env bash
# App Attest on Linux, walked end to end with the release binaries, as Examples/AppAttest/README.md tells it: the
# identity enrolled with deviceid-server's attestation CA (once), a key made in the TPM, the TPM's evidence about it
# sealed to the server, relayed by the backend and answered with Apple's attestation object, and two assertions.
# Writes into FOLDER what the team's backend receives and keeps, and only that (the evidence, which only the server can
# open, is not kept), so that any App Attest verifier can be pointed at it:
#
#   FOLDER/root.pem                          the attestation CA's root (PEM; after a rotation the new and the previous
#                                            root, newest first): what the backend pins, and only it
#   FOLDER/relying-party, FOLDER/origin      the App ID (TEAM.ACCESS-GROUP) and the client data's origin
#   FOLDER/key-id                            the key id (base64): SHA-256 of the key's X9.63 point
#   FOLDER/environment                       development or production: the App Attest environment attested for
#   FOLDER/attestation/client-data.json      WebAuthn's client data (type webauthn.create, a fresh challenge)
#   FOLDER/attestation/attestation-object    the server's answer: Apple's attestation object (CBOR, apple-appattest)
#   FOLDER/assertion-N/client-data.json      client data (type webauthn.get), for N = 1, 2
#   FOLDER/assertion-N/assertion             the assertion (CBOR {signature, authenticatorData})
#
#   Examples/AppAttest/walk.sh SERVER TEAM KEY_ID TEAM_KEY.pem FOLDER
#
# SERVER is a running deviceid-server (http://127.0.0.1:8080, say) started with --tpm-ca trusting this machine's TPM
# maker, TEAM registered there with KEY_ID and TEAM_KEY.pem's public key. `deviceid` is taken from PATH, or $DEVICEID;
# the access group from $ACCESS_GROUP (default app-attest-example); the environment from $APP_ATTEST_ENVIRONMENT
# (development, the default, or production). Examples/AppAttest/verify.py FOLDER then checks it as the team's backend
# would.
set -euo pipefail
[ $# -eq 5 ] || { echo "usage: Examples/AppAttest/walk.sh SERVER TEAM KEY_ID TEAM_KEY.pem FOLDER" >&2; exit 64; }
server=$1 team=$2 key_id=$3 team_key=$4 folder=$5
here=$(cd "$(dirname "$0")" && pwd)
deviceid=${DEVICEID:-deviceid}
group=${ACCESS_GROUP:-app-attest-example}
environment=${APP_ATTEST_ENVIRONMENT:-development}
case $environment in
    development) production=() ;;
    production) production=(--production) ;;
    *) echo "walk.sh: APP_ATTEST_ENVIRONMENT is development or production, not $environment" >&2; exit 64 ;;
esac
mkdir -p "$folder/attestation" "$folder/assertion-1" "$folder/assertion-2"

fetch() { python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' "$server/v1/$1"; }
# The backend's calls (TOKEN first, or - for a call that needs none); prints the body of a 200 answer.
backend() { "$here/../DeviceCheck/backend.py" "$server" "$team" "$key_id" "$team_key" "$@" | sed 's/^200 //'; }
app_attest() { "$deviceid" app-attest "$@" --team "$team" --access-group "$group" --non-interactive; }
# WebAuthn's client data of type $1, with a fresh challenge of the backend's (32 random bytes, base64url).
client_data() {
    python3 -c 'import base64, json, os, sys
challenge = base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode()
sys.stdout.write(json.dumps({"type": sys.argv[1], "challenge": challenge, "origin": sys.argv[2]}, separators=(",", ":")))' "$1" "$origin"
}
sha256() { python3 -c 'import base64, hashlib, sys; print(base64.b64encode(hashlib.sha256(open(sys.argv[1], "rb").read()).digest()).decode())' "$1"; }

# 1. The backend pins the attestation CA's root, once.
fetch tpm/attestation_ca > "$folder/root.pem"
app_id="$team.$group"
printf %s "$app_id" > "$folder/relying-party"
origin="app-attest:$app_id"
printf %s "$origin" > "$folder/origin"
printf %s "$environment" > "$folder/environment"

# 2. The identity, enrolled once (Examples/AppAttest/enroll.sh): credential activation relayed by the backend, and the
#    certificate of the identity's attestation key kept.
DEVICEID=$deviceid "$here/enroll.sh" "$server" "$team" "$key_id" "$team_key" "$group"
recipient=$(fetch tpm/attestation_key | python3 -c 'import json, sys; print(json.load(sys.stdin)["attestation_key"])')

# 3. A key in the TPM, attested for a challenge of the backend's: the app's evidence is sealed to the server, which
#    alone opens it; the backend relays it and keeps the server's answer, Apple's attestation object.
key=$(app_attest generate-key)
printf %s "$key" > "$folder/key-id"
client_data webauthn.create > "$folder/attestation/client-data.json"
hash=$(sha256 "$folder/attestation/client-data.json")
evidence=$(app_attest attest --key-id "$key" --client-data-hash "$hash" --attestation-key "$recipient" "${production[@]}")
answer=$(backend - app-attest "$app_id" "$evidence" "$hash") || { echo "walk.sh: the server refused the evidence: $answer" >&2; exit 1; }
printf %s "$answer" | python3 -c 'import base64, json, sys
sys.stdout.buffer.write(base64.b64decode(json.load(sys.stdin)["attestation_object"]))' > "$folder/attestation/attestation-object"

# 4. Two requests, each signed with an assertion whose counter is higher than the one before.
for n in 1 2; do
    client_data webauthn.get > "$folder/assertion-$n/client-data.json"
    app_attest assert --key-id "$key" --client-data-hash "$(sha256 "$folder/assertion-$n/client-data.json")" |
        base64 -d > "$folder/assertion-$n/assertion"
done
echo "walk.sh: key $key attested ($environment) and asserted twice; what the backend keeps is in $folder"
