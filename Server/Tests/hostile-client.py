#!/usr/bin/python3
"""Hostile clients against a running deviceid-server, written apart from its code as an attacker on the network
writes them (standard library plus python3-cryptography). Each check prints one line; the exit status is the number
of checks that failed.

    hostile-client.py URL TEAM KID KEY.pem OTHER_TEAM OTHER_KID OTHER_KEY.pem IDLE_SECONDS

TEAM and OTHER_TEAM are registered with the public halves of KEY.pem and OTHER_KEY.pem; the server closes idle
connections after IDLE_SECONDS (--idle-timeout, and --read-timeout the same)."""
import base64, json, socket, ssl, sys, time, urllib.error, urllib.parse, urllib.request, uuid
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def es256(key, data: bytes) -> bytes:
    r, s = decode_dss_signature(key.sign(data, ec.ECDSA(hashes.SHA256())))
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def jws(header: str, payload: str, sign) -> str:
    """A compact JWS of the header and payload exactly as written (members named twice included)."""
    signing_input = f"{b64url(header.encode())}.{b64url(payload.encode())}"
    return f"{signing_input}.{b64url(sign(signing_input.encode()))}"


def jwt(kid_members: str, team: str, key) -> str:
    return jws(f'{{"alg":"ES256",{kid_members},"typ":"JWT"}}', json.dumps({"iat": int(time.time()), "iss": team}), lambda d: es256(key, d))


def device_token(team: str, iat=None, exp=None, rsa_ber=False) -> str:
    """A device token of a key made here, for `team`; `rsa_ber`: an RSA key whose dpk spells its outer length in one
    byte more than DER."""
    now = int(time.time())
    payload = f'{{"aud":"{team}","exp":{exp if exp is not None else now + 600},"iat":{iat if iat is not None else now},"jti":"{b64url(uuid.uuid4().bytes)}"}}'
    if rsa_ber:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        der = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.PKCS1)
        assert der[1] == 0x82
        dpk = der[:1] + b"\x83\x00" + der[2:]
        sign = lambda d: key.sign(d, padding.PKCS1v15(), hashes.SHA256())
        alg = "RS256"
    else:
        key = ec.generate_private_key(ec.SECP256R1())
        dpk = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        sign = lambda d: es256(key, d)
        alg = "ES256"
    return jws(f'{{"alg":"{alg}","dpk":"{b64url(dpk)}","typ":"device-token+jwt"}}', payload, sign)


def post(url: str, endpoint: str, bearer: str, token: str, **extra) -> tuple[int, str]:
    body = {"device_token": base64.b64encode(token.encode()).decode(), "transaction_id": str(uuid.uuid4()),
            "timestamp": int(time.time() * 1000), **extra}
    request = urllib.request.Request(f"{url}/v1/{endpoint}", data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": f"Bearer {bearer}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def closed_within(url: str, first_bytes: bytes, seconds: float) -> bool:
    """Whether the server closes a connection that sent `first_bytes` and then nothing, within `seconds`."""
    parts = urllib.parse.urlsplit(url)
    connection = socket.create_connection((parts.hostname, parts.port), timeout=seconds)
    if parts.scheme == "https":
        connection = ssl.create_default_context().wrap_socket(connection, server_hostname=parts.hostname)
    connection.sendall(first_bytes)
    try:
        return connection.recv(1) == b""
    except (socket.timeout, TimeoutError):
        return False
    except (ConnectionResetError, ssl.SSLError):
        return True
    finally:
        connection.close()


def main() -> int:
    url, team, kid, key_path, other_team, other_kid, other_key_path, idle = sys.argv[1:]
    load = lambda path: serialization.load_pem_private_key(open(path, "rb").read(), password=None)
    key, other_key, idle = load(key_path), load(other_key_path), float(idle)
    own = jwt(f'"kid":"{kid}"', team, key)
    failed = 0

    def check(what: str, outcome, expected) -> None:
        nonlocal failed
        ok = outcome == expected if not callable(expected) else expected(outcome)
        failed += not ok
        print(f"{'ok' if ok else 'FAILED'}: {what}: {outcome}")

    serving = lambda: post(url, "validate_device_token", own, device_token(team))[0]
    check("a valid request", serving(), 200)
    for iat, exp in [(-1, 9223372036854775807), (-9223372036854775808, -9223372036854775208), (9223372036854775807, -9223372036854775209)]:
        check(f"a token with iat {iat}, exp {exp}", post(url, "update_two_bits", own, device_token(team, iat, exp), bit0=True)[0], 400)
        check("  the server still answers", serving(), 200)
    check("a token of an RSA key spelt in BER", post(url, "validate_device_token", own, device_token(team, rsa_ber=True))[0], 400)
    for members in [f'"kid":"{kid}","kid":"{other_kid}"', f'"kid":"{other_kid}","kid":"{kid}"', f'"kid":"{other_kid}"']:
        check(f"{team}'s key, {members}, iss {other_team}",
              post(url, "update_two_bits", jwt(members, other_team, key), device_token(other_team), bit0=True)[0], 401)
    check(f"{other_team}'s own JWT", post(url, "validate_device_token", jwt(f'"kid":"{other_kid}"', other_team, other_key), device_token(other_team))[0], 200)
    check("half a request head, then nothing: closed", closed_within(url, b"POST /v1/query_two_bits HTTP/1.1\r\nHost: x\r\n", idle + 10), True)
    check("a head and half a body, then nothing: closed",
          closed_within(url, b"POST /v1/query_two_bits HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"dev", idle + 10), True)
    check("the server still answers", serving(), 200)
    return failed


if __name__ == "__main__":
    sys.exit(main())
