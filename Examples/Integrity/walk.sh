#!/usr/bin/env bash
# Device integrity on Linux, walked end to end with the release binaries, as Examples/Integrity/README.md tells it: the
# identity enrolled with deviceid-server (once, as for App Attest), a nonce the backend asks the server for, the app's
# evidence over it (the TPM's quote of PCRs 0 to 7 and the firmware's log, sealed to the server), and the verdict the
# backend gets for it. Writes into FOLDER what the team's backend receives, and only that:
#
#   FOLDER/nonce           the nonce the server issued (base64)
#   FOLDER/evidence        what the app gave the backend to relay (base64): sealed, the backend cannot read it
#   FOLDER/verdict.json    the server's answer: {"labels": [...], "reasons": [{"code", "detail"}], "secure_boot": ...}
#
#   Examples/Integrity/walk.sh SERVER TEAM KEY_ID TEAM_KEY.pem FOLDER
#
# SERVER is a running deviceid-server started with --tpm-ca trusting this machine's TPM maker, TEAM registered there
# with KEY_ID and TEAM_KEY.pem's public key. `deviceid` is taken from PATH, or $DEVICEID; the access group from
# $ACCESS_GROUP (default integrity-example); the log from $EVENT_LOG (default: the package's copy, else the kernel's).
# Examples/Integrity/check.py FOLDER then decides as the team's backend would.
set -euo pipefail
[ $# -eq 5 ] || { echo "usage: Examples/Integrity/walk.sh SERVER TEAM KEY_ID TEAM_KEY.pem FOLDER" >&2; exit 64; }
server=$1 team=$2 key_id=$3 team_key=$4 folder=$5
here=$(cd "$(dirname "$0")" && pwd)
deviceid=${DEVICEID:-deviceid}
group=${ACCESS_GROUP:-integrity-example}
mkdir -p "$folder"
backend() { "$here/../DeviceCheck/backend.py" "$server" "$team" "$key_id" "$team_key" - "$@" | sed 's/^200 //'; }
field() { python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

# 1. The identity, enrolled once: the server certifies its attestation key, which quotes.
DEVICEID=$deviceid "$here/../AppAttest/enroll.sh" "$server" "$team" "$key_id" "$team_key" "$group"
recipient=$(python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' \
    "$server/v1/tpm/attestation_key" | field attestation_key)

# 2. The backend asks for a nonce; the app quotes over it; the backend relays the evidence with the nonce.
nonce=$(backend integrity-nonce | field nonce)
printf %s "$nonce" > "$folder/nonce"
"$deviceid" integrity evidence --nonce "$nonce" --attestation-key "$recipient" --access-group "$group" \
    --non-interactive ${EVENT_LOG:+--event-log "$EVENT_LOG"} > "$folder/evidence"
backend integrity-verdict "$folder/evidence" "$nonce" > "$folder/verdict.json" || { echo "walk.sh: the server refused the request" >&2; exit 1; }
echo "walk.sh: verdict $(field labels < "$folder/verdict.json"); what the backend received is in $folder"
