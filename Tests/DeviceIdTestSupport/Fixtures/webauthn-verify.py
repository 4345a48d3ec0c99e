"""Hands App Attest's objects to py_webauthn, a stock WebAuthn verifier, as a relying party would.

Reads one JSON object on standard input and prints one JSON object:

  {"assertions": {"rp_id", "public_key" (COSE, base64), "count" (the counter known before), "items": [
      {"id" (the key id, base64), "authenticator_data", "signature", "client_data_json" (base64 each), "challenge"
       (base64url)}]}}
  → {"assertions": [{"accepted": true, "count": N} | {"accepted": false, "reason": "..."}]}

  {"registration": {"rp_id", "origin", "root" (PEM), "id" (the key id, base64), "client_data_json",
      "attestation_object" (base64 each), "challenge" (base64url)}}
  → {"registration": {"accepted": true, "fmt", "aaguid", "count"} | {"accepted": false, "reason": "..."}}

The assertions are checked in order, each against the counter the ones accepted before left, as a backend keeps it.
The registration (an attestation object) is checked with only the given root trusted for its format.
"""
import base64
import json
import sys

from webauthn import verify_authentication_response, verify_registration_response
from webauthn.helpers import bytes_to_base64url


def credential(key_id, **response):
    """A credential as a browser hands it over: the key id (base64) as id and rawId, each response member base64."""
    raw_id = bytes_to_base64url(base64.b64decode(key_id))
    members = {name: bytes_to_base64url(base64.b64decode(value)) for name, value in response.items()}
    return {"id": raw_id, "rawId": raw_id, "type": "public-key", "response": members}


def challenge(text):
    """A base64url challenge's bytes."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def assertions(request):
    count = request["count"]
    public_key = base64.b64decode(request["public_key"])
    results = []
    for item in request["items"]:
        try:
            verified = verify_authentication_response(
                credential=credential(
                    item["id"], authenticatorData=item["authenticator_data"], clientDataJSON=item["client_data_json"],
                    signature=item["signature"]),
                expected_challenge=challenge(item["challenge"]),
                expected_rp_id=request["rp_id"],
                expected_origin=item["origin"],
                credential_public_key=public_key,
                credential_current_sign_count=count,
            )
            count = verified.new_sign_count
            results.append({"accepted": True, "count": count})
        except Exception as error:  # the verifier's refusal, kept as the test's evidence
            results.append({"accepted": False, "reason": f"{type(error).__name__}: {error}"})
    return results


def registration(request):
    try:
        verified = verify_registration_response(
            credential=credential(
                request["id"], clientDataJSON=request["client_data_json"], attestationObject=request["attestation_object"]),
            expected_challenge=challenge(request["challenge"]),
            expected_rp_id=request["rp_id"],
            expected_origin=request["origin"],
            pem_root_certs_bytes_by_fmt={"tpm": [request["root"].encode()]},
        )
        if verified.credential_id != base64.b64decode(request["id"]):
            return {"accepted": False, "reason": "the attested credential is not the key id"}
        fmt = getattr(verified.fmt, "value", verified.fmt)  # an enum in some versions, its value in others
        return {"accepted": True, "fmt": fmt, "aaguid": verified.aaguid, "count": verified.sign_count}
    except Exception as error:  # the verifier's refusal, kept as the test's evidence
        return {"accepted": False, "reason": f"{type(error).__name__}: {error}"}


request = json.load(sys.stdin)
answer = {}
if "assertions" in request:
    answer["assertions"] = assertions(request["assertions"])
if "registration" in request:
    answer["registration"] = registration(request["registration"])
json.dump(answer, sys.stdout)
