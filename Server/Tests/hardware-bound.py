#!/usr/bin/python3
"""DeviceCheck's promise end to end: a team's bits follow the TPM, not a key the user can replace. Run by
scripts/test-installation with the release binaries, inside `scripts/software-tpm run --authority CA` and
`scripts/with-private-keyring`, once on SQLite and once on PostgreSQL:

    hardware-bound.py SERVER DEVICEID WORK DATABASE [SERVERS]

starts SERVERS (1 or 2) deviceid-server processes at once on DATABASE, trusting the authority's TPMs, registers two
teams, and checks, through Examples/DeviceCheck/backend.py's functions, that:

- a keyring-held key is never hardware-bound, and the backend refuses it a free trial;
- bits a TPM-held key set before its activation survive it, and the key is then hardware-bound;
- `deviceid regenerate` makes a new key, whose bits are its own until it is activated, then the TPM's, which it could not
  change before (a bit0 it cleared stays set): the free trial is refused; so are another access group's key of the same team, through another server when there are two (they
  agree on the TPM's pseudonym), and an update through either key changes the bits of both;
- another team sees none of them, though it proves the same TPM;
- a new TPM of the same maker, on a new keyring, is a new device (it runs this script again, as `new-machine`).
"""
import base64, importlib.util, json, os, pathlib, signal, subprocess, sys, time, urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.dont_write_bytecode = True   # loading the backend leaves no __pycache__ in the checkout
spec = importlib.util.spec_from_file_location("backend", ROOT / "Examples/DeviceCheck/backend.py")
backend = importlib.util.module_from_spec(spec)
spec.loader.exec_module(backend)

TEAMS = {"TEAM1": "KID1", "TEAM2": "KID2"}


class Check:
    """Runs commands and backend calls, and stops at the first answer that is not the one expected."""

    def __init__(self, deviceid: str, work: pathlib.Path, urls: list):
        self.deviceid, self.work, self.urls = deviceid, work, urls

    def tpm(self, *arguments: str) -> str:
        return self.run(self.deviceid, *arguments, "--key-protection", "tpm", "--key-type", "p256", "--non-interactive")

    def token(self, team: str, group: str) -> str:
        """A TPM-held key's token, its attestation sealed to the servers' key (the same on every server of the database)."""
        with urllib.request.urlopen(f"{self.urls[0]}/v1/tpm/attestation_key") as answer:
            key = json.load(answer)["attestation_key"]
        return self.tpm("token", "--team", team, "--access-group", group, "--attestation-key", key)

    def run(self, *command: str, stdin: str = "") -> str:
        done = subprocess.run(command, input=stdin, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"hardware-bound: {' '.join(command[:2])} exited {done.returncode}: {done.stderr.strip()}")
        return done.stdout.strip()

    def call(self, team: str, token: str, endpoint: str, server: int = 0, **fields) -> tuple:
        jwt = backend.team_jwt(team, TEAMS[team], str(self.work / f"{team}.pem"))
        return backend.call(self.urls[server], endpoint, jwt, {**backend.request(token), **fields})

    def expect(self, what: str, answer, expected):
        if answer != expected:
            sys.exit(f"hardware-bound: {what}: got {answer!r}, expected {expected!r}")
        print(f"  {what}: {answer[1] if isinstance(answer, tuple) else answer}")

    def bits(self, team: str, token: str, server: int = 0) -> tuple:
        """The query's answer, its month left out."""
        status, text = self.call(team, token, "query_two_bits", server)
        if text == "Bit State Not Found":
            return status, text
        bits = json.loads(text)
        bits.pop("last_update_time")
        return status, bits

    def activate(self, team: str, token: str, group: str, server: int = 0):
        """Credential activation of `token`, made by the identity of access group `group`, which alone can answer it."""
        status, challenge = self.call(team, token, "tpm/activation_challenge", server)
        self.expect(f"{team}: a challenge for the token", status, 200)
        credential = self.run(self.deviceid, "activate-credential", "--access-group", group, "--non-interactive", stdin=challenge)
        self.expect(f"{team}: the credential returned", self.call(team, token, "tpm/activate", server, credential=credential), (200, ""))

    def trial(self, team: str, token: str) -> str:
        """The example backend's decision, as its command prints it: granted or refused."""
        done = subprocess.run([sys.executable, str(ROOT / "Examples/DeviceCheck/backend.py"), self.urls[0], team, TEAMS[team],
                               str(self.work / f"{team}.pem"), token, "trial"], capture_output=True, text=True)
        return done.stdout.strip().split(":")[0]


def bound(bit0: bool, bit1: bool) -> tuple:
    """A query's answer, its month left out, for a hardware-bound device."""
    return 200, {"bit0": bit0, "bit1": bit1, "hardware_bound": True}


def main() -> int:
    server_binary, deviceid, work, database, *count = sys.argv[1:]
    work = pathlib.Path(work)
    work.mkdir(parents=True, exist_ok=True)
    for team, key_id in TEAMS.items():
        subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", work / f"{team}.pem"], check=True)
        subprocess.run(["openssl", "ec", "-in", work / f"{team}.pem", "-pubout", "-out", work / f"{team}.pub.pem"],
                       check=True, capture_output=True)
        subprocess.run([server_binary, "team", "add", team, "--key-id", key_id, "--public-key", work / f"{team}.pub.pem",
                        "--database", database], check=True)
    servers, urls = [], []
    try:
        # Started together: on one database they race to make the pseudonym secret, and must agree on it.
        for index in range(int(count[0]) if count else 1):
            port = int(subprocess.run([ROOT / "scripts/free-port-pair"], capture_output=True, text=True, check=True).stdout)
            log = open(work / f"server-{index}.log", "w")
            servers.append(subprocess.Popen(
                [server_binary, "serve", "--listen", f"127.0.0.1:{port}", "--metrics-listen", f"127.0.0.1:{port + 1}",
                 "--database", database, "--tpm-ca", os.environ["DEVICEID_TPM_CA"]], stdout=log, stderr=log))
            urls.append(f"http://127.0.0.1:{port}")
        for url, server in zip(urls, servers):
            deadline = time.monotonic() + 30
            while True:
                try:
                    urllib.request.urlopen(url + "/health", timeout=1)
                    break
                except OSError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        sys.exit(f"hardware-bound: the server at {url} did not start: {(work / 'server-0.log').read_text()}")
                    time.sleep(0.05)
        scenario(Check(deviceid, work, urls))
        for server in servers:
            server.send_signal(signal.SIGTERM)
            if server.wait(timeout=60) != 0:
                sys.exit("hardware-bound: a server did not stop cleanly on SIGTERM")
    finally:
        for server in servers:
            if server.poll() is None:
                server.kill()
    return 0


def scenario(check: Check):
    other = -1   # the second server when there are two
    print("a keyring-held key")
    keyring = check.run(check.deviceid, "token", "--team", "TEAM1", "--access-group", "keyring-app", "--key-type", "p256", "--non-interactive")
    check.expect("validate: Apple's empty answer", check.call("TEAM1", keyring, "validate_device_token"), (200, ""))
    check.expect("the backend's free trial", check.trial("TEAM1", keyring), "refused")

    print("a TPM-held key: bits set before activation survive it")
    first = check.token("TEAM1", "app")
    header = json.loads(base64.urlsafe_b64decode(first.split(".")[0] + "=="))
    check.expect("what the backend reads of the token's header", sorted(header), ["alg", "dpk", "tps", "typ"])
    check.expect("bit1 set before activation", check.call("TEAM1", first, "update_two_bits", bit1=True), (200, ""))
    check.expect("query before activation", check.bits("TEAM1", first), (200, {"bit0": False, "bit1": True}))
    check.expect("validate before activation", check.call("TEAM1", first, "validate_device_token"), (200, ""))
    check.activate("TEAM1", first, "app")
    check.expect("validate", check.call("TEAM1", first, "validate_device_token"), (200, '{"hardware_bound":true}'))
    check.expect("query", check.bits("TEAM1", first), bound(False, True))
    check.expect("the backend's free trial", check.trial("TEAM1", first), "granted")
    check.expect("the free trial again", check.trial("TEAM1", first), "refused")

    print("deviceid regenerate: a new key, the same TPM")
    old_id = check.tpm("id", "--access-group", "app")
    new_id = check.tpm("regenerate", "--access-group", "app")
    check.expect("a new id", new_id != old_id, True)
    second = check.token("TEAM1", "app")
    check.expect("before activation: its own bits", check.bits("TEAM1", second), (200, "Bit State Not Found"))
    check.expect("bit0 cleared through the key not yet activated", check.call("TEAM1", second, "update_two_bits", bit0=False), (200, ""))
    check.activate("TEAM1", second, "app", server=other)
    check.expect("after: the TPM's bits, which that key could not change", check.bits("TEAM1", second, server=other), bound(True, True))
    check.expect("the free trial", check.trial("TEAM1", second), "refused")

    print("another app (access group) of the team, on the same TPM")
    app2 = check.token("TEAM1", "other-app")
    check.activate("TEAM1", app2, "other-app")
    check.expect("update bit0 through it", check.call("TEAM1", app2, "update_two_bits", bit0=False), (200, ""))
    check.expect("the regenerated key reads it", check.bits("TEAM1", second, server=other), bound(False, True))

    print("another team, the same TPM")
    team2 = check.token("TEAM2", "app")
    check.activate("TEAM2", team2, "app")
    check.expect("hardware-bound", check.call("TEAM2", team2, "validate_device_token"), (200, '{"hardware_bound":true}'))
    check.expect("none of TEAM1's bits", check.bits("TEAM2", team2), (200, "Bit State Not Found"))

    print("a new TPM of the same maker, on a new keyring")
    subprocess.run([ROOT / "scripts/software-tpm", "run", "--authority", str(pathlib.Path(os.environ["DEVICEID_TPM_CA"]).parent),
                    ROOT / "scripts/with-private-keyring", sys.executable, __file__, "new-machine", check.deviceid, str(check.work),
                    *check.urls], check=True)


def new_machine(deviceid: str, work: str, *urls: str) -> int:
    check = Check(deviceid, pathlib.Path(work), list(urls))
    fresh = check.token("TEAM1", "app")
    check.activate("TEAM1", fresh, "app")
    check.expect("hardware-bound", check.call("TEAM1", fresh, "validate_device_token"), (200, '{"hardware_bound":true}'))
    check.expect("a new device: no bits", check.bits("TEAM1", fresh), (200, "Bit State Not Found"))
    check.expect("the backend's free trial", check.trial("TEAM1", fresh), "granted")
    return 0


if __name__ == "__main__":
    sys.exit(new_machine(*sys.argv[2:]) if sys.argv[1:2] == ["new-machine"] else main())
