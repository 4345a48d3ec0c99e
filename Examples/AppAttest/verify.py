#!/usr/bin/env python3
"""The team's backend checking what Examples/AppAttest/walk.sh wrote into FOLDER, as a backend checks Apple's App
Attest, given only deviceid-server's root instead of Apple's (pip install webauthn==3.0.1 pyattest==1.0.5):

    verify.py FOLDER

The attestation object is Apple's (format apple-appattest). pyattest, a stock App Attest verifier, checks it as it
checks Apple's: the chain to the root (root.pem may hold several roots, newest first: one must do), the nonce
SHA-256(authData ‖ clientDataHash) in the key's certificate, the key id, the app id, the environment's AAGUID and the
counter 0. py_webauthn, a stock WebAuthn verifier, checks the same certificates as WebAuthn's `apple` anonymous format.
The receipt: a JWS signed by the intermediate (x5c[1]), for this key, app and environment; it states the risk metric.
Then each assertion in order: pyattest checks its signature as Apple's (ECDSA-SHA256 over SHA-256(authenticatorData ‖
clientDataHash), which WebAuthn's assertions, signed over authenticatorData ‖ clientDataHash itself, are not), and the
backend its app id hash and its counter, which must rise; then the last one again, which that rule must refuse as a
replay. Prints one line per check; exits 0 when every check went as it should."""
import asyncio
import base64
import hashlib
import json
import pathlib
import re
import sys

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from pyattest.assertion import Assertion
from pyattest.attestation import Attestation
from pyattest.configs.apple import AppleConfig
from webauthn import verify_registration_response
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url

sys.dont_write_bytecode = True  # no __pycache__ left beside the example


class Replayed(Exception):
    """An assertion whose counter is not above the last one the backend kept."""


def reason(refusal: Exception) -> str:
    """A refusal's type and message (pyattest's refusals have only a type), and those of what caused it."""
    reasons = []
    while refusal is not None and len(reasons) < 3:
        reasons.append(f"{type(refusal).__name__} {refusal}".strip())
        refusal = refusal.__cause__ or refusal.__context__
    return " <- ".join(reasons)


def unpadded(text: str) -> bytes:
    """base64url without padding, as JWS writes it."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def receipt_claims(receipt: bytes, intermediate: x509.Certificate) -> dict:
    """The receipt's payload, once its ES256 signature by the intermediate's key is checked."""
    header, payload, signature = receipt.decode("ascii").split(".")
    if json.loads(unpadded(header)) != {"alg": "ES256", "typ": "app-attest-receipt"}:
        raise ValueError("not an App Attest receipt signed with ES256")
    raw = unpadded(signature)   # JWS's r‖s, 32 bytes each
    if len(raw) != 64:
        raise ValueError("the receipt's signature is not P-256's r‖s")
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    intermediate.public_key().verify(der, f"{header}.{payload}".encode(), ec.ECDSA(hashes.SHA256()))
    return json.loads(unpadded(payload))


def main(folder: pathlib.Path) -> int:
    pem = (folder / "root.pem").read_bytes()
    roots = re.findall(rb"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----\n?", pem, re.S)  # newest first
    app_id = (folder / "relying-party").read_text()
    origin = (folder / "origin").read_text()
    key_id = base64.b64decode((folder / "key-id").read_text())
    environment = (folder / "environment").read_text().strip()
    client_data = (folder / "attestation" / "client-data.json").read_bytes()
    attestation_object = (folder / "attestation" / "attestation-object").read_bytes()
    credential_id = bytes_to_base64url(key_id)

    def challenge(client_data: bytes) -> bytes:
        # A backend compares the challenge with the one it issued; this one reads it back.
        return base64url_to_bytes(json.loads(client_data)["challenge"])

    # pyattest, as for Apple's attestations, under each root in turn: it hashes the client data (its nonce) itself.
    refusals, verified = [], None
    for root in roots:
        config = AppleConfig(key_id=key_id, app_id=app_id, production=environment == "production", root_ca=root)
        attestation = Attestation(raw=attestation_object, nonce=client_data, config=config)
        try:
            asyncio.run(attestation.verify())
        except Exception as refusal:
            refusals.append(reason(refusal))
            continue
        verified = attestation
        break
    if verified is None:
        print(f"attestation: refused by pyattest ({'; '.join(refusals) or 'no root in root.pem'})")
        return 1
    counter = verified.data["data"]["counter"]
    print(f"attestation: accepted by pyattest (apple-appattest, {environment}, counter {counter})")

    # The same certificates as WebAuthn's `apple` anonymous format, for py_webauthn.
    decoded = cbor2.loads(attestation_object)
    x5c = decoded["attStmt"]["x5c"]
    apple = cbor2.dumps({"fmt": "apple", "attStmt": {"x5c": x5c}, "authData": decoded["authData"]})
    try:
        registration = verify_registration_response(
            credential={
                "id": credential_id, "rawId": credential_id, "type": "public-key",
                "response": {
                    "clientDataJSON": bytes_to_base64url(client_data), "attestationObject": bytes_to_base64url(apple),
                },
            },
            expected_challenge=challenge(client_data), expected_rp_id=app_id, expected_origin=origin,
            pem_root_certs_bytes_by_fmt={"apple": roots},
        )
    except Exception as refusal:
        print(f"attestation: refused by py_webauthn ({reason(refusal)})")
        return 1
    fmt = getattr(registration.fmt, "value", registration.fmt)  # an enum in some versions, its value in others
    if fmt != "apple" or registration.credential_id != key_id:
        print(f"attestation: py_webauthn's is not the apple attestation of key {credential_id}")
        return 1
    print(f"attestation: accepted by py_webauthn (format {fmt}, counter {registration.sign_count})")

    # The receipt, signed by the intermediate that pyattest's path went through (x5c[1], between the key and the root).
    validated = [cert.dump() for cert in verified.data["certs"].iter_certs(include_root=False)]
    if validated != x5c[::-1]:
        print("receipt: refused (x5c is not the path pyattest validated)")
        return 1
    try:
        receipt = receipt_claims(decoded["attStmt"]["receipt"], x509.load_der_x509_certificate(x5c[1]))
        stated = (base64.b64decode(receipt["key_id"]), receipt["app_id"], receipt["environment"])
        if stated != (key_id, app_id, environment):
            raise ValueError(f"for key {receipt['key_id']}, app {receipt['app_id']}, {receipt['environment']}")
    except Exception as refusal:
        print(f"receipt: refused ({reason(refusal)})")
        return 1
    print(f"receipt: risk metric {receipt['risk_metric']} ({receipt['environment']})")

    public_key = x509.load_der_x509_certificate(x5c[0]).public_key()

    def assertion(path: pathlib.Path, kept: int) -> int:
        """The assertion's counter once pyattest accepted its signature, it is for this app and its counter is above
        `kept` (the backend's rule; Replayed otherwise)."""
        raw = (path / "assertion").read_bytes()
        client_data = (path / "client-data.json").read_bytes()
        expected_hash = hashlib.sha256(client_data).digest()
        Assertion(raw, expected_hash=expected_hash, public_key=public_key, config=verified.config).verify()
        authenticator_data = cbor2.loads(raw)["authenticatorData"]
        if authenticator_data[:32] != hashlib.sha256(app_id.encode()).digest():
            raise ValueError("made for another app id")
        count = int.from_bytes(authenticator_data[33:37], "big")
        if count <= kept:
            raise Replayed(f"counter {count} is not above {kept}")
        return count

    kept = counter
    assertions = sorted(folder.glob("assertion-*"), key=lambda path: int(path.name.split("-")[1]))
    if not assertions:
        print("assertions: none in the folder")
        return 1
    for path in assertions:
        try:
            kept = assertion(path, kept)
        except Exception as refusal:
            print(f"{path.name}: refused ({reason(refusal)})")
            return 1
        print(f"{path.name}: accepted (counter {kept})")
    last = assertions[-1]
    try:
        assertion(last, kept)
    except Replayed as refusal:  # the expected outcome
        print(f"{last.name} replayed: refused ({refusal})")
        return 0
    except Exception as refusal:
        print(f"{last.name} replayed: refused, but not by the counter rule ({reason(refusal)})")
        return 1
    print(f"{last.name} replayed: accepted, which a backend must never do")
    return 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: verify.py FOLDER", file=sys.stderr)
        sys.exit(64)
    sys.exit(main(pathlib.Path(sys.argv[1])))
