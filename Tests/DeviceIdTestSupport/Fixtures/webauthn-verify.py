"""Hands App Attest's objects to the verifiers backends run, as a relying party would: pyattest (App Attest's Python
verifier, given the server's root instead of Apple's) and py_webauthn (WebAuthn's `apple` anonymous format, from the
same certificate).

Reads one JSON object on standard input and prints one JSON object:

  {"assertions": {"rp_id", "public_key" (COSE, base64), "count" (the counter known before), "items": [
      {"id" (the key id, base64), "authenticator_data", "signature", "client_data_json" (base64 each), "challenge"
       (base64url)}]}}
  → {"assertions": [{"accepted": true, "count": N} | {"accepted": false, "reason": "..."}]}

  {"registration": {"rp_id", "origin", "root" (PEM), "id" (the key id, base64), "client_data_json",
      "attestation_object" (base64 each), "challenge" (base64url), "production" (bool)}}
  → {"registration": {"accepted": true, "fmt", "aaguid", "count"} | {"accepted": false, "reason": "..."}}

Each assertion is checked by pyattest (the signature over SHA-256(authenticatorData ‖ clientDataHash)), then as a
backend keeps the key: its App ID's hash, and a counter above the one the assertions accepted before left. The
registration (Apple's attestation object) is checked by pyattest, then rewrapped as WebAuthn's `apple` format for
py_webauthn, each with only the given root trusted; both must accept it.
"""
import asyncio
import base64
import hashlib
import json
import struct
import sys

import cbor2
from pyattest.assertion import Assertion
from pyattest.attestation import Attestation
from pyattest.configs.apple import AppleConfig
from webauthn import verify_registration_response
from webauthn.helpers import bytes_to_base64url, decode_credential_public_key, decoded_public_key_to_cryptography


def challenge(text):
    """A base64url challenge's bytes."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def refusal(error):
    return {"accepted": False, "reason": f"{type(error).__name__}: {error}"}


def assertions(request):
    count = request["count"]
    public_key = decoded_public_key_to_cryptography(decode_credential_public_key(base64.b64decode(request["public_key"])))
    rp_hash = hashlib.sha256(request["rp_id"].encode()).digest()
    results = []
    for item in request["items"]:
        key_id = base64.b64decode(item["id"])
        authenticator_data = base64.b64decode(item["authenticator_data"])
        raw = cbor2.dumps({"signature": base64.b64decode(item["signature"]), "authenticatorData": authenticator_data})
        client_data_hash = hashlib.sha256(base64.b64decode(item["client_data_json"])).digest()
        try:
            Assertion(raw, client_data_hash, public_key, AppleConfig(key_id, request["rp_id"], production=False)).verify()
            if authenticator_data[:32] != rp_hash:
                raise ValueError("the authenticator data is for another App ID")
            counter = struct.unpack("!I", authenticator_data[33:37])[0]
            if counter <= count:
                raise ValueError(f"the sign count {counter} is not above the one kept, {count}")
            count = counter
            results.append({"accepted": True, "count": count})
        except Exception as error:  # the verifier's refusal, kept as the test's evidence
            results.append(refusal(error))
    return results


def registration(request):
    key_id = base64.b64decode(request["id"])
    raw = base64.b64decode(request["attestation_object"])
    client_data = base64.b64decode(request["client_data_json"])
    root = request["root"].encode()
    try:
        config = AppleConfig(key_id, request["rp_id"], production=request["production"], root_ca=root)
        # pyattest hashes its nonce into the client-data hash: the client data is that nonce.
        asyncio.run(Attestation(raw, client_data, config).verify())
    except Exception as error:  # pyattest's refusal, kept as the test's evidence
        return refusal(error) | {"verifier": "pyattest"}
    decoded = cbor2.loads(raw)
    apple = cbor2.dumps({"fmt": "apple", "attStmt": {"x5c": decoded["attStmt"]["x5c"]}, "authData": decoded["authData"]})
    raw_id = bytes_to_base64url(key_id)
    try:
        verified = verify_registration_response(
            credential={"id": raw_id, "rawId": raw_id, "type": "public-key", "response": {
                "clientDataJSON": bytes_to_base64url(client_data), "attestationObject": bytes_to_base64url(apple)}},
            expected_challenge=challenge(request["challenge"]),
            expected_rp_id=request["rp_id"],
            expected_origin=request["origin"],
            pem_root_certs_bytes_by_fmt={"apple": [root]},
        )
    except Exception as error:  # py_webauthn's refusal, kept as the test's evidence
        return refusal(error) | {"verifier": "py_webauthn"}
    if verified.credential_id != key_id:
        return {"accepted": False, "reason": "the attested credential is not the key id"}
    aaguid = decoded["authData"][37:53].rstrip(b"\0").decode()
    return {"accepted": True, "fmt": decoded["fmt"], "aaguid": aaguid, "count": verified.sign_count}


request = json.load(sys.stdin)
answer = {}
if "assertions" in request:
    answer["assertions"] = assertions(request["assertions"])
if "registration" in request:
    answer["registration"] = registration(request["registration"])
json.dump(answer, sys.stdout)
