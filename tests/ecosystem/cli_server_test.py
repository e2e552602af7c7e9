"""cli_server_test.py: `cdplan --server URL COMMAND` against the real
`cdplan serve` on 127.0.0.1 port 0: the same answers as the REST routes,
CDPLAN_TOKEN sent as the Bearer token once tokens exist (401 -> exit 1
without it), exit 2 for a bad URL or an unsupported command, 3 when nothing
listens.
usage: cli_server_test.py PATH_TO_CDPLAN
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

BIN = sys.argv[1]
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
failures = []
tmp = tempfile.mkdtemp(prefix="cdplan-client-")
db = os.path.join(tmp, "s.db")
srv = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:0", "--db", db],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def cdplan(*args, stdin=None, token=None):
    env = dict(os.environ)
    env.pop("CDPLAN_TOKEN", None)
    if token:
        env["CDPLAN_TOKEN"] = token
    env["CDPLAN_DB"] = os.path.join(tmp, "never-opened.db")
    r = subprocess.run([BIN, *args], input=stdin, capture_output=True, text=True, timeout=120, env=env)
    return r.returncode, r.stdout, r.stderr


def expect(what, got, rc):
    if got[0] != rc:
        failures.append(f"{what}: exit {got[0]}, want {rc}: {got[2][:300]}")
    return got


try:
    line = srv.stdout.readline()
    url = json.loads(line)["listening"]
    rc = expect("hw list", cdplan(f"--server={url}", "hw", "list", "amd"), 0)
    names = [h["name"] for h in json.loads(rc[1] or "{}").get("hardware", [])]
    if "mi350x" not in names or "h200" in names:
        failures.append(f"hw list amd over --server: {names}")
    expect("hw show", cdplan("--server", url, "hw", "show", "h200"), 0)
    expect("hw show unknown", cdplan("--server", url, "hw", "show", "nope"), 1)
    est = json.dumps({"hardware": "mi300x", "ops": [{"op": "gemm", "m": 4096, "n": 4096, "k": 4096, "dtype": "bf16"}]})
    got = expect("estimate --hw", cdplan("--server", url, "estimate", "-", "--hw=h200", stdin=est), 0)
    if '"hardware":"h200"' not in got[1]:
        failures.append(f"--hw not applied over --server: {got[1][:200]}")
    req = json.load(open(os.path.join(REPO, "data", "workloads", "plan_dlrm_mi350x.json")))
    req["time_limit_s"] = 2
    got = expect("plan", cdplan("--server", url, "plan", "-", stdin=json.dumps(req)), 0)
    pid = json.loads(got[1] or "{}").get("id", "")
    got = expect("export torchrec", cdplan("--server", url, "export", "torchrec", pid, "--module", "m.ebc"), 0)
    if 'MODULE_PATH = "m.ebc"' not in got[1]:
        failures.append(f"export over --server: {got[1][:200]}")
    if not os.path.exists(db) or os.path.exists(os.path.join(tmp, "never-opened.db")):
        failures.append("a --server command opened a local database")
    # tokens: reads need one once one exists
    tok = json.loads(subprocess.run([BIN, "token", "create", "--scope", "read", "--db", db],
                                    capture_output=True, text=True).stdout)["token"]
    time.sleep(1.5)
    got = expect("no token", cdplan("--server", url, "hw", "list"), 1)
    if '"code":"unauthorized"' not in got[2]:
        failures.append(f"401 body not on stderr: {got[2][:200]}")
    expect("CDPLAN_TOKEN", cdplan("--server", url, "hw", "list", token=tok), 0)
    expect("read token, plan scope", cdplan("--server", url, "plan", "-", stdin=json.dumps(req), token=tok), 1)
    expect("bad url", cdplan("--server", "ftp://x", "hw", "list"), 2)
    expect("unsupported", cdplan("--server", url, "calibrate", "x.json"), 2)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    got = expect("nothing listening", cdplan("--server", f"http://127.0.0.1:{port}", "hw", "list"), 3)
    if not re.search(r'"code":"unavailable"', got[2]):
        failures.append(f"no listener: {got[2][:200]}")
finally:
    srv.terminate()
    srv.wait(timeout=10)
    shutil.rmtree(tmp, ignore_errors=True)

if failures:
    print("\n".join(failures), file=sys.stderr)
    sys.exit(1)
print("cdplan --server: hw, estimate, plan, export torchrec, tokens and errors as the REST API")
