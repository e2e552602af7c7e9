#!/usr/bin/env python3
"""Every measured eager DCN set at the model's default host (the H100's first set, blind 2, 4,
5, 6; the H200 set and blind6; blind7 and blind8 here) and, where the runner took mini steps
(host_mini), the mini route: cdplan's own (recipe host_mini_batch + host_mini_step_ms,
costmodel/step.c cost_step_host_mini). From the repository root:

  python3 data/measurements/dcn-blind7/all_sets.py build/cli/cdplan [-v]
"""
import importlib, json, os, statistics, subprocess, sys, tempfile
M = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CD = sys.argv[1] if len(sys.argv) > 1 else "build/cli/cdplan"

def step(db, hw, c, **extra):
    rc = dict(c["recipe"], **extra)
    return json.loads(subprocess.run([CD, "step", "-", "--db", db], input=json.dumps(
        {"hardware": hw, "workload": c["workload"], "recipe": rc}), capture_output=True, text=True, check=True).stdout)

def mod(path, name, setv):
    os.environ["BLIND_SET"] = setv
    sys.path.insert(0, path)
    m = importlib.import_module(name); importlib.reload(m); sys.path.pop(0)
    return m

def meas(files):
    d = {}
    for f in files:
        for r in json.load(open(f))["rows"]:
            d.setdefault(r["label"], []).append(r)
    return d

def sets():
    job = json.load(open(M + "/h100-dcn-mlperf/job.json"))["params"]["cases"]
    cs = [{"id": c["label"], "workload": c["workload"], "recipe": c["recipe"]} for c in job]
    yield "h100 first", "h100-sxm", cs, meas([M + "/h100-dcn-mlperf/dcn.json", M + "/h100-dcn-mlperf/dcn_repeat.json"])
    for s in ("2", "4", "5", "6"):
        m = mod(M + "/h100-dcn-mlperf", "blind2", s)
        yield "h100 blind" + s, "h100-sxm", m.cases(), meas([M + "/h100-dcn-mlperf/blind%s.json" % s])
    m = mod(M + "/h200-dcn-mlperf", "cases", "")
    yield "h200 set", "h200", m.cases(), meas([M + "/h200-dcn-mlperf/dcn.json"])
    m = mod(M + "/h200-dcn-mlperf", "blind6", "")
    yield "h200 blind6", "h200", m.cases(), meas([M + "/h200-dcn-mlperf/blind6.json"])
    for s in ("7", "8"):
        f = M + "/dcn-blind7/blind%s.json" % s
        if not os.path.exists(f):
            continue
        m = mod(M + "/dcn-blind7", "blind7", s)
        res = json.load(open(f))
        hw = "h200" if "H200" in res["device"].get("name", "") else "h100-sxm"
        yield "%s blind%s" % (hw.split("-")[0], s), hw, m.cases(), meas([f])

allerr = []
with tempfile.TemporaryDirectory() as d:
    db = d + "/p.db"
    for name, hw, cs, ms in sets():
        e, em = [], []
        for c in cs:
            rs = ms.get(c["id"])
            if not rs: continue
            m = statistics.mean(r["step_ms"] for r in rs)
            p = step(db, hw, c)["step_ms"]
            e.append(abs(p / m - 1))
            if "host_mini" in rs[0]:
                hm = rs[0]["host_mini"]
                r = step(db, hw, c, host_mini_batch=hm["batch"], host_mini_step_ms=hm["step_ms"])
                pm, op = r["step_ms"], r["host_op_us"]
                em.append(pm / m - 1)
                if "-v" in sys.argv: print("   %-46s meas %6.2f default %+6.1f%% mini %+6.1f%% op %.2f" % (c["id"], m, 100*(p/m-1), 100*(pm/m-1), op))
        allerr += e
        s = "%-12s n=%2d default median %5.1f %% max %5.1f %%" % (name, len(e), 100 * statistics.median(e), 100 * max(e))
        if em:
            a = [abs(x) for x in em]
            s += " | mini median %5.1f %% max %5.1f %%" % (100 * statistics.median(a), 100 * max(a))
        print(s, flush=True)
print("all n=%d median %.1f %%" % (len(allerr), 100 * statistics.median(allerr)))
