#!/usr/bin/python3
"""Hostile clients against a running deviceid-server, written apart from its code as an attacker on the network
writes them (standard library plus python3-cryptography). Each check prints one line; the exit status is the number
of checks that failed.

    hostile-client.py URL TEAM KID KEY.pem OTHER_TEAM OTHER_KID IDLE_SECONDS

TEAM is registered with the public half of KEY.pem, OTHER_TEAM under OTHER_KID; the server closes idle connections
after IDLE_SECONDS (--idle-timeout, and --read-timeout the same). What only a server on the network shows: clients
that stop half way are cut off, and it answers on. The tokens and JWTs that a suite already refuses in the same
release build (DeviceIdServerTests/HostileClientTests.swift, beside this file) are not sent again."""
import base64, json, socket, ssl, sys, time, urllib.error, urllib.parse, urllib.request, uuid
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
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


def device_token(team: str) -> str:
    """A device token of a P-256 key made here, for `team`."""
    now = int(time.time())
    payload = f'{{"aud":"{team}","exp":{now + 600},"iat":{now},"jti":"{b64url(uuid.uuid4().bytes)}"}}'
    key = ec.generate_private_key(ec.SECP256R1())
    dpk = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return jws(f'{{"alg":"ES256","dpk":"{b64url(dpk)}","typ":"device-token+jwt"}}', payload, lambda d: es256(key, d))


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
    url, team, kid, key_path, other_team, other_kid, idle = sys.argv[1:]
    key = serialization.load_pem_private_key(open(key_path, "rb").read(), password=None)
    idle = float(idle)
    own = jwt(f'"kid":"{kid}"', team, key)
    failed = 0

    def check(what: str, outcome, expected) -> None:
        nonlocal failed
        ok = outcome == expected if not callable(expected) else expected(outcome)
        failed += not ok
        print(f"{'ok' if ok else 'FAILED'}: {what}: {outcome}")

    serving = lambda: post(url, "validate_device_token", own, device_token(team))[0]
    check("a valid request", serving(), 200)
    # One of HostileClientTests' impersonations, whose refusal /metrics then counts as jwt_malformed.
    check(f"{team}'s key, its kid named twice, iss {other_team}",
          post(url, "update_two_bits", jwt(f'"kid":"{kid}","kid":"{other_kid}"', other_team, key), device_token(other_team), bit0=True)[0], 401)
    check("half a request head, then nothing: closed", closed_within(url, b"POST /v1/query_two_bits HTTP/1.1\r\nHost: x\r\n", idle + 10), True)
    check("a head and half a body, then nothing: closed",
          closed_within(url, b"POST /v1/query_two_bits HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"dev", idle + 10), True)
    check("the server still answers", serving(), 200)
    return failed


if __name__ == "__main__":
    sys.exit(main())
