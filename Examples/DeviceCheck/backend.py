#!/usr/bin/python3
"""A team's backend calling deviceid-server the way a DeviceCheck backend calls Apple: a team JWT signed with
the team's P-256 key (ES256), and the device token the app sent, standard base64. Standard library plus
python3-cryptography; no Swift.

    backend.py SERVER TEAM KEY_ID KEY.pem TOKEN validate|query|update [bit0=true|false] [bit1=true|false] [-timestamp]
    backend.py SERVER TEAM KEY_ID KEY.pem TOKEN challenge|activate [credential=BASE64]
    backend.py SERVER TEAM KEY_ID KEY.pem TOKEN certify ENROLLMENT_JSON
    backend.py SERVER TEAM KEY_ID KEY.pem TOKEN trial
    backend.py SERVER TEAM KEY_ID KEY.pem - app-attest APP_ID EVIDENCE CLIENT_DATA_HASH
    backend.py SERVER TEAM KEY_ID KEY.pem - integrity-nonce
    backend.py SERVER TEAM KEY_ID KEY.pem - integrity-verdict EVIDENCE_FILE NONCE

prints the HTTP status and the body, and exits 0 when the status is 200. `challenge` and `activate` relay TPM credential
activation (a server started with --tpm-ca): `challenge` prints the credential sealed to the device's TPM for the device
to activate (`deviceid activate-credential`), `activate` returns what the device released. `certify` returns what
`deviceid app-attest enroll` printed (a JSON object, whose members join the request's) and prints the certificate of the
identity's attestation key, which App Attest's evidence carries back to the server (Examples/AppAttest).

`app-attest`, which needs no token (`-` in its place), relays what `deviceid app-attest attest` printed (EVIDENCE,
base64, sealed to the server) for the app APP_ID (TEAM.ACCESS-GROUP) and the client data's hash (base64) to
`POST /v1/app_attest/attestation`, which answers Apple's attestation object (`{"attestation_object": BASE64}`).

`integrity-nonce` asks for a nonce (`POST /v1/integrity/nonce`, `{"nonce": BASE64}`), which the app quotes over
(`deviceid integrity evidence`); `integrity-verdict` relays what the app printed (in EVIDENCE_FILE: base64, sealed to the
server, and too long for a command's argument) with that nonce to `POST /v1/integrity/verdict`, which answers the verdict (Examples/Integrity).

`trial` is the decision DeviceCheck exists for, a free trial once per device: granted (exit 0) only to a device whose
key is proven to be in a TPM, whose bits are the TPM's whatever key it makes next, and which never had one (bit0,
then set); refused (exit 1) to a keyring-held identity, which its user can always make anew."""
import base64, json, sys, time, urllib.error, urllib.request, uuid
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def team_jwt(team: str, key_id: str, key_path: str) -> str:
    """An ES256 JWT: header kid, claims iss (the team) and iat (now), signature r‖s as JWS wants."""
    with open(key_path, "rb") as file:
        key = serialization.load_pem_private_key(file.read(), password=None)
    header = b64url(json.dumps({"alg": "ES256", "kid": key_id, "typ": "JWT"}).encode())
    claims = b64url(json.dumps({"iss": team, "iat": int(time.time())}).encode())
    r, s = decode_dss_signature(key.sign(f"{header}.{claims}".encode(), ec.ECDSA(hashes.SHA256())))
    return f"{header}.{claims}.{b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def call(server: str, endpoint: str, jwt: str, body: dict) -> tuple[int, str]:
    request = urllib.request.Request(
        f"{server}/v1/{endpoint}", data=json.dumps(body).encode(), method="POST",
        headers={"Authorization": f"Bearer {jwt}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def request(token: str) -> dict:
    return {
        "device_token": base64.b64encode(token.encode()).decode(),   # the token's bytes, as apps send Apple's
        "transaction_id": str(uuid.uuid4()),
        "timestamp": int(time.time() * 1000),
    }


def trial(server: str, jwt: str, token: str) -> int:
    """Grants the free trial once per device that cannot make itself new; prints the decision."""
    status, text = call(server, "validate_device_token", jwt, request(token))
    if status != 200:
        print(status, text)
        return 1
    if not (text and json.loads(text).get("hardware_bound") is True):
        print("refused: the device key is not proven to be in a TPM; its user can make a new identity at will")
        return 1
    status, text = call(server, "query_two_bits", jwt, request(token))
    if status != 200:
        print(status, text)
        return 1
    if text != "Bit State Not Found" and json.loads(text)["bit0"]:
        print("refused: this device already had its free trial")
        return 1
    status, text = call(server, "update_two_bits", jwt, {**request(token), "bit0": True})
    if status != 200:
        print(status, text)
        return 1
    print("granted: the free trial starts, and bit0 of this device's TPM remembers it")
    return 0


def main() -> int:
    server, team, key_id, key_path, token, action, *bits = sys.argv[1:]
    if action == "trial":
        return trial(server, team_jwt(team, key_id, key_path), token)
    if action == "app-attest":
        app_id, evidence, client_data_hash = bits
        body = {"app_id": app_id, "evidence": evidence, "client_data_hash": client_data_hash}
        status, text = call(server, "app_attest/attestation", team_jwt(team, key_id, key_path), body)
        print(status, text)
        return 0 if status == 200 else 1
    if action in ("integrity-nonce", "integrity-verdict"):
        body = {}
        if action == "integrity-verdict":
            evidence_file, nonce = bits
            with open(evidence_file) as file:
                body = {"evidence": file.read().strip(), "nonce": nonce}
        status, text = call(server, action.replace("-", "/"), team_jwt(team, key_id, key_path), body)
        print(status, text)
        return 0 if status == 200 else 1
    body = request(token)
    for bit in bits:
        if bit.startswith("{"):   # members of the device's own, as a JSON object
            body.update(json.loads(bit))
            continue
        if bit.startswith("-"):   # leave a field out, to see the refusal
            body.pop(bit[1:], None)
            continue
        name, value = bit.split("=", 1)
        body[name] = value == "true" if value in ("true", "false") else value
    endpoint = {"validate": "validate_device_token", "query": "query_two_bits", "update": "update_two_bits",
                "challenge": "tpm/activation_challenge", "activate": "tpm/activate",
                "certify": "tpm/attestation_key_certificate"}[action]
    status, text = call(server, endpoint, team_jwt(team, key_id, key_path), body)
    print(status, text)
    return 0 if status == 200 else 1


if __name__ == "__main__":
    sys.exit(main())
