#!/usr/bin/env python3
"""The team's backend checking what Examples/AppAttest/walk.sh wrote into FOLDER, with py_webauthn, a stock WebAuthn
verifier (pip install webauthn==3.0.1), given only the attestation CA's root:

    verify.py FOLDER [SERVER TEAM KEY_ID KEY.pem]

The attestation first (verify_registration_response, format tpm, the root pinned for it): the key is in a TPM whose
maker the server vouched for, and it is the key the key id names. Then each assertion in order
(verify_authentication_response), each with the counter the one before left; then the last one again, which must be
refused as a replay. With a server and the team's key (as backend.py takes them), it then asks deviceid-server for
the attestation's risk metric (POST /v1/app_attest/risk_metric): how many keys the team's apps had attested on that
device in thirty days. Prints one line per check; exits 0 when every check went as it should."""
import base64
import hashlib
import json
import pathlib
import sys

from webauthn import verify_authentication_response, verify_registration_response
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url, parse_cbor

sys.dont_write_bytecode = True  # no __pycache__ left in the example's folder
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "DeviceCheck"))
import backend  # noqa: E402  the team's JWT and its calls, as the DeviceCheck example makes them


def risk_metric(folder: pathlib.Path, server: str, team: str, key_id: str, key_path: str) -> int:
    """Asks the server how many keys the team's apps attested on the attested key's device in thirty days."""
    body = {
        "attestation_object": base64.b64encode((folder / "attestation" / "attestation-object").read_bytes()).decode(),
        "client_data_hash": base64.b64encode(hashlib.sha256((folder / "attestation" / "client-data.json").read_bytes()).digest()).decode(),
    }
    status, text = backend.call(server, "app_attest/risk_metric", backend.team_jwt(team, key_id, key_path), body)
    if status != 200:
        print(f"risk metric: {status} {text}")
        return 1
    print(f"risk metric: {json.loads(text)['risk_metric']}")
    return 0


def main(folder: pathlib.Path) -> int:
    root = (folder / "root.pem").read_bytes()
    rp_id = (folder / "relying-party").read_text()
    origin = (folder / "origin").read_text()
    key_id = base64.b64decode((folder / "key-id").read_text())
    credential_id = bytes_to_base64url(key_id)

    def challenge(client_data: bytes) -> bytes:
        # A backend compares the challenge with the one it issued; this one reads it back.
        return base64url_to_bytes(json.loads(client_data)["challenge"])

    client_data = (folder / "attestation" / "client-data.json").read_bytes()
    registration = verify_registration_response(
        credential={
            "id": credential_id, "rawId": credential_id, "type": "public-key",
            "response": {
                "clientDataJSON": bytes_to_base64url(client_data),
                "attestationObject": bytes_to_base64url((folder / "attestation" / "attestation-object").read_bytes()),
            },
        },
        expected_challenge=challenge(client_data), expected_rp_id=rp_id, expected_origin=origin,
        pem_root_certs_bytes_by_fmt={"tpm": [root]},
    )
    fmt = getattr(registration.fmt, "value", registration.fmt)  # an enum in some versions, its value in others
    if fmt != "tpm" or registration.credential_id != key_id:
        print(f"attestation: not the tpm attestation of key {credential_id}")
        return 1
    print(f"attestation: accepted (format tpm, AAGUID {registration.aaguid}, counter {registration.sign_count})")

    def assertion(path: pathlib.Path, count: int) -> int:
        signed = parse_cbor((path / "assertion").read_bytes())
        client_data = (path / "client-data.json").read_bytes()
        return verify_authentication_response(
            credential={
                "id": credential_id, "rawId": credential_id, "type": "public-key",
                "response": {
                    "authenticatorData": bytes_to_base64url(signed["authenticatorData"]),
                    "clientDataJSON": bytes_to_base64url(client_data),
                    "signature": bytes_to_base64url(signed["signature"]),
                },
            },
            expected_challenge=challenge(client_data), expected_rp_id=rp_id, expected_origin=origin,
            credential_public_key=registration.credential_public_key, credential_current_sign_count=count,
        ).new_sign_count

    count = registration.sign_count
    assertions = sorted(folder.glob("assertion-*"), key=lambda path: int(path.name.split("-")[1]))
    for path in assertions:
        count = assertion(path, count)
        print(f"{path.name}: accepted (counter {count})")
    try:
        assertion(assertions[-1], count)
    except Exception as refusal:  # py_webauthn's refusal is the expected outcome
        print(f"{assertions[-1].name} replayed: refused ({refusal})")
        return 0
    print(f"{assertions[-1].name} replayed: accepted, which a backend must never do")
    return 1


if __name__ == "__main__":
    if len(sys.argv) not in (2, 6):
        print("usage: verify.py FOLDER [SERVER TEAM KEY_ID KEY.pem]", file=sys.stderr)
        sys.exit(64)
    folder = pathlib.Path(sys.argv[1])
    status = main(folder)
    if status == 0 and len(sys.argv) == 6:
        status = risk_metric(folder, *sys.argv[2:])
    sys.exit(status)
