"""cpu_selftest: a bounded piece of arithmetic on Python alone (no torch, no GPU), for
testing the validation pipeline end to end: params n (work), sleep_ms, fail."""
import sys
import time

from job_schema import (EXIT_FAILED, REQUIRED, RUNNER_VERSION, JobError, progress, v_bool,
                        v_int, v_obj)


check_params = v_obj({
    "n": (v_int(0, 10 ** 8), REQUIRED),
    "sleep_ms": (v_int(0, 86400000), 0),
    "fail": (v_bool, False),
})


def run(job, _env=None, _state=None):
    p = job["params"]
    t0 = time.perf_counter()
    n = p["n"]
    s = n * (n - 1) // 2
    sq = 0
    h = 1469598103934665603  # FNV-1a over the decimal digits of 0..n-1, bounded work
    for i in range(n):
        sq += i * i
        if i < 100000:
            for ch in str(i).encode():
                h = ((h ^ ch) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    if sq != (n - 1) * n * (2 * n - 1) // 6:
        raise JobError("internal", "self-test arithmetic mismatch", rc=EXIT_FAILED)
    if p["sleep_ms"]:
        progress("sleeping %d ms" % p["sleep_ms"])
        time.sleep(p["sleep_ms"] / 1000.0)
    if p["fail"]:
        raise JobError("internal", "failing as asked (params.fail)", rc=EXIT_FAILED)
    out = {"kind": "cpu_selftest", "ok": True,
           "result": {"n": n, "sum": s, "sum_squares": sq, "fnv1a_64": "%016x" % h},
           "elapsed_ms": (time.perf_counter() - t0) * 1000.0,
           "runner": RUNNER_VERSION, "python": sys.version.split()[0]}
    if "id" in job:
        out["id"] = job["id"]
    return out
