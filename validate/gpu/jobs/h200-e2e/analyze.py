#!/usr/bin/env python3
"""After the device run: label the rows of the runner's dlrm_step result (calibration,
proof, check), write the calibration-only file, fit a calibration version on it (with the
op files and the shared dlrm_step.json), and predict every row before and after.
Usage: analyze.py RESULT.json OUTDIR CDPLAN PRE_DB POST_DB
The pre-run predictions of the step model as committed before the run (the "old model")
are read from OUTDIR/predictions_prerun.json (made before the device run)."""
import json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROLES = ["calibration", "calibration", "proof: H100 recipe (direct port)", "calibration",
         "calibration", "calibration", "check (not fitted)", "proof: H200 recipe"]
NAMES = ["cal-k5-b16384-p2", "cal-k4-b8192-p2", "proof-h100-recipe", "cal-k2-b32768-p2",
         "cal-k2-b16384-p4", "cal-k1-b32768-p4", "chk-hbm-b16384-p2", "proof-h200-recipe"]

def predict(cdplan, db, path):
    env = dict(os.environ, CDPLAN_DB=db)
    p = subprocess.run([sys.executable, os.path.join(HERE, "predict.py"), cdplan, path],
                       capture_output=True, text=True, check=True, env=env)
    return json.loads(p.stdout)

def main():
    res, out, new, pre_db, post_db = sys.argv[1:6]
    prerun = {x["case"]: x for x in json.load(open(os.path.join(out, "predictions_prerun.json")))}
    d = json.load(open(res))
    job = json.load(open(os.path.join(HERE, "dlrm_step.json")))
    cases = job["params"]["cases"]
    for r in d["rows"]:  # match rows to cases by (batch, pooling, host_tables)
        for i, c in enumerate(cases):
            if (c["batch"], c.get("pooling", 2), sorted(c["host_tables"])) == \
               (r["batch"], r["pooling"], sorted(r["host_tables"])):
                r["case"], r["role"] = NAMES[i], ROLES[i]
    json.dump(d, open(os.path.join(out, "dlrm_step.json"), "w"), indent=1)
    cal = dict(d, rows=[r for r in d["rows"] if r.get("role") == "calibration"])
    cal_path = os.path.join(out, "calibration_rows.json")
    json.dump(cal, open(cal_path, "w"), indent=1)
    m = os.path.join(os.path.dirname(HERE), "..", "..", "..", "data", "measurements", "h200")
    m = os.path.normpath(m)
    env = dict(os.environ, CDPLAN_DB=post_db)
    p = subprocess.run([new, "calibrate", "--hw", "h200", m + "/gemm.json", m + "/memory_ops.json",
                        m + "/dlrm_step.json", cal_path], capture_output=True, text=True, env=env)
    if p.returncode:
        sys.exit("calibrate failed: " + p.stderr)
    json.dump(json.loads(p.stdout), open(os.path.join(out, "calibrate_post.json"), "w"), indent=1)
    path = os.path.join(out, "dlrm_step.json")
    a = [{"pred_step_ms": prerun[r["case"]]["pred_prerun_old_model_ms"]} for r in d["rows"]]
    b = predict(new, pre_db, path)
    c = predict(new, post_db, path)
    table = []
    for r, x, y, z in zip(d["rows"], a, b, c):
        meas = r["step_ms"]
        table.append({"case": r.get("case"), "role": r.get("role"), "batch": r["batch"],
                      "pooling": r["pooling"], "host_tables": r["host_tables"],
                      "meas_step_ms": meas, "samples_per_s": r["samples_per_s"],
                      "meas_peak_bytes": r["peak_mem_bytes"],
                      "pred_prerun_old_model_ms": x["pred_step_ms"],
                      "pred_prerun_new_model_ms": y["pred_step_ms"],
                      "pred_post_calibration_ms": z["pred_step_ms"],
                      "pred_peak_bytes": z["pred_peak_bytes"],
                      "err_prerun_old": x["pred_step_ms"] / meas - 1,
                      "err_prerun_new": y["pred_step_ms"] / meas - 1,
                      "err_post": z["pred_step_ms"] / meas - 1})
    json.dump(table, open(os.path.join(out, "predictions.json"), "w"), indent=1)
    for t in table:
        print("%-20s %-5d %d %-18s meas %8.2f | old %7.2f (%+.1f%%) new %7.2f (%+.1f%%) post %7.2f (%+.1f%%) | mem %.1f/%.1f GB" % (
            t["case"], t["batch"], t["pooling"], t["host_tables"], t["meas_step_ms"],
            t["pred_prerun_old_model_ms"], 100 * t["err_prerun_old"],
            t["pred_prerun_new_model_ms"], 100 * t["err_prerun_new"],
            t["pred_post_calibration_ms"], 100 * t["err_post"],
            (t["meas_peak_bytes"] or 0) / 1e9, t["pred_peak_bytes"] / 1e9))
    by = {t["case"]: t for t in table}
    h1, h2 = by.get("proof-h100-recipe"), by.get("proof-h200-recipe")
    if h1 and h2:
        mg = h1["meas_step_ms"] / h2["meas_step_ms"]
        for k in ("pred_prerun_old_model_ms", "pred_prerun_new_model_ms", "pred_post_calibration_ms"):
            pg = h1[k] / h2[k]
            print("gain measured %.3f, %s predicted %.3f (%+.1f%%)" % (mg, k, pg, 100 * (pg / mg - 1)))

if __name__ == "__main__":
    main()
