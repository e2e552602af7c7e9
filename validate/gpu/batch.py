#!/usr/bin/env python3
"""Run several runner.py jobs in sequence on one GPU host, each under its own
time limit and all under one deadline; used for the measurement runs on the
lent H200 (see README.md).

    python3 batch.py --out DIR [--deadline SECONDS] JOB.json[=TIMEOUT_S] ...

Each job's result goes to DIR/<job file stem>.json (partial results when a job
was stopped at its limit: runner.py writes what it has on SIGTERM); the runners'
progress goes to DIR/log.txt; DIR/env.json records the host (nvidia-smi, Python,
torch, triton). No shell is used.
"""
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GRACE_S = 20


def _cmd_out(argv, timeout=20):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        return r.stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return "unavailable: %s" % e


def _signal_group(p, sig):
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def host_facts():
    facts = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             "python": sys.version.split()[0], "cpu_count": os.cpu_count()}
    facts["nvidia_smi"] = _cmd_out(
        ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,"
         "clocks.max.sm,temperature.gpu,power.draw,power.limit", "--format=csv"])
    facts["versions"] = _cmd_out(
        [sys.executable, "-c",
         "import torch, json\n"
         "try:\n import triton; tv = triton.__version__\n"
         "except Exception as e:\n tv = None\n"
         "print(json.dumps({'torch': torch.__version__, 'cuda': torch.version.cuda, "
         "'triton': tv}))"], timeout=120)
    return facts


def main(argv):
    args = argv[1:]
    out, deadline, jobs = None, 500.0, []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--out" and i + 1 < len(args):
            out = args[i + 1]
            i += 2
        elif a == "--deadline" and i + 1 < len(args):
            deadline = float(args[i + 1])
            i += 2
        else:
            path, _, lim = a.partition("=")
            jobs.append((path, float(lim) if lim else None))
            i += 1
    if not out or not jobs:
        sys.stderr.write(__doc__)
        return 2
    os.makedirs(out, exist_ok=True)
    t_start = time.monotonic()
    with open(os.path.join(out, "env.json"), "w") as f:
        json.dump(host_facts(), f, indent=1)
    log = open(os.path.join(out, "log.txt"), "ab")
    summary = []
    for path, lim in jobs:
        left = deadline - (time.monotonic() - t_start) - GRACE_S - 5
        if left < 15:
            summary.append((path, "not run: deadline", 0.0))
            continue
        lim = min(lim, left) if lim else left
        stem = os.path.splitext(os.path.basename(path))[0]
        dest = os.path.join(out, stem + ".json")
        log.write(("=== %s (limit %.0f s) ===\n" % (path, lim)).encode())
        log.flush()
        t0 = time.monotonic()
        with open(dest, "wb") as fo:
            p = subprocess.Popen([sys.executable, os.path.join(HERE, "runner.py"), path],
                                 stdout=fo, stderr=log, start_new_session=True)
            try:
                rc = p.wait(timeout=lim)
            except subprocess.TimeoutExpired:
                # the runner writes its partial result on SIGTERM; its own children
                # (kernel_sweep's compile processes) share its process group
                _signal_group(p, signal.SIGTERM)
                try:
                    rc = p.wait(timeout=GRACE_S)
                except subprocess.TimeoutExpired:
                    _signal_group(p, signal.SIGKILL)
                    rc = p.wait()
            _signal_group(p, signal.SIGKILL)  # leftovers of a finished job
        dt = time.monotonic() - t0
        summary.append((path, "rc=%s" % rc, dt))
        print("job %s: rc=%s in %.1f s" % (path, rc, dt), flush=True)
    log.close()
    print("batch done in %.1f s" % (time.monotonic() - t_start))
    for path, status, dt in summary:
        print("  %-50s %-22s %6.1f s" % (path, status, dt))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
