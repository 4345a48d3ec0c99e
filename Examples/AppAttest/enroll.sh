#!/usr/bin/env bash
# Enrolls this machine's TPM-held identity of an access group with deviceid-server, once: a token carrying the TPM's
# attestation sealed to the server; credential activation relayed by the team's backend; the TPM's answer and
# description sent back for the certificate of the identity's attestation key, which the app keeps. App Attest's
# evidence and device-integrity quotes are made with that key, and the server takes them once it has certified it.
#
#   Examples/AppAttest/enroll.sh SERVER TEAM KEY_ID TEAM_KEY.pem ACCESS_GROUP
#
# `deviceid` is taken from PATH, or $DEVICEID. Makes the identity (P-256, in the TPM) when the group has none.
set -euo pipefail
[ $# -eq 5 ] || { echo "usage: Examples/AppAttest/enroll.sh SERVER TEAM KEY_ID TEAM_KEY.pem ACCESS_GROUP" >&2; exit 64; }
server=$1 team=$2 key_id=$3 team_key=$4 group=$5
here=$(cd "$(dirname "$0")" && pwd)
deviceid=${DEVICEID:-deviceid}
backend() { "$here/../DeviceCheck/backend.py" "$server" "$team" "$key_id" "$team_key" "$@" | sed 's/^200 //'; }
app_attest() { "$deviceid" app-attest "$@" --team "$team" --access-group "$group" --non-interactive; }

recipient=$(python3 -c 'import json, sys, urllib.request
print(json.load(urllib.request.urlopen(sys.argv[1]))["attestation_key"])' "$server/v1/tpm/attestation_key")
token=$("$deviceid" token --team "$team" --access-group "$group" --key-protection tpm --key-type p256 --non-interactive \
    --attestation-key "$recipient" --require-attestation)
enrollment=$(backend "$token" challenge | app_attest enroll)
backend "$token" certify "$enrollment" | app_attest keep-certificate
