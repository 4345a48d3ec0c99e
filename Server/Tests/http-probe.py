#!/usr/bin/python3
"""What scripts/test-installation asks of a running deviceid-server that curl cannot say in one line (standard library
only). Each subcommand exits 0 when the server answered as documented.

    http-probe.py wait URL                 until URL/health answers (at most 30 s)
    http-probe.py get URL                  prints the body of a GET of URL
    http-probe.py attestation-key URL      prints the server's attestation_key (GET URL/v1/tpm/attestation_key)
    http-probe.py refusals URL             GET of an endpoint is 405, a 70 kB body 413, /metrics on the API's port 404
    http-probe.py half-request PORT        TLS to 127.0.0.1:PORT, half a request sent, "connected" printed; then waits
                                           (at most 60 s) for the server to close the connection
    http-probe.py unix-health SOCKET       the status line of GET /health over the Unix socket (connects within 30 s)
    http-probe.py move-attestation TOKEN OTHER
                                           OTHER's signing input with TOKEN's sealed attestation (`tps`) in its header
"""
import base64, json, socket, ssl, sys, time, urllib.error, urllib.request


def retrying(attempt, seconds=30):
    """attempt()'s value, tried again every 50 ms while it raises, for at most `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return attempt()
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def status(request):
    try:
        return urllib.request.urlopen(request, timeout=10).status
    except urllib.error.HTTPError as error:
        return error.code


def header(token):
    return json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))


def main(command, *arguments):
    if command == "wait":
        retrying(lambda: urllib.request.urlopen(arguments[0] + "/health", timeout=1))
    elif command == "get":
        sys.stdout.write(urllib.request.urlopen(arguments[0], timeout=5).read().decode())
    elif command == "attestation-key":
        print(json.load(urllib.request.urlopen(arguments[0] + "/v1/tpm/attestation_key", timeout=10))["attestation_key"])
    elif command == "refusals":
        endpoint = arguments[0] + "/v1/query_two_bits"
        assert status(urllib.request.Request(endpoint, method="GET")) == 405
        assert status(urllib.request.Request(endpoint, data=b" " * 70000, method="POST")) == 413
        assert status(urllib.request.Request(arguments[0] + "/metrics")) == 404   # metrics are on their own listener
    elif command == "half-request":
        plain = socket.create_connection(("127.0.0.1", int(arguments[0])))
        connection = ssl.create_default_context().wrap_socket(plain, server_hostname="127.0.0.1")
        connection.sendall(b"POST /v1/query_two_bits HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        print("connected", flush=True)
        connection.settimeout(60)
        try:
            connection.recv(1)
        except OSError:
            pass
    elif command == "unix-health":
        def connected():
            client = socket.socket(socket.AF_UNIX)
            client.connect(arguments[0])
            return client
        client = retrying(connected)
        client.sendall(b"GET /health HTTP/1.1\r\nHost: deviceid\r\nConnection: close\r\n\r\n")
        print(client.makefile("rb").readline().decode().strip())
    elif command == "move-attestation":
        token, other = arguments
        moved = header(other)
        moved["tps"] = header(token)["tps"]
        encoded = json.dumps(moved, separators=(",", ":"), sort_keys=True).encode()
        print(base64.urlsafe_b64encode(encoded).rstrip(b"=").decode() + "." + other.split(".")[1])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(*sys.argv[1:]) if len(sys.argv) > 1 else sys.exit(__doc__)
