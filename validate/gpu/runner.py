#!/usr/bin/env python3
"""cdplan validation runner: executes one job on the GPU host it runs on.

    python3 runner.py JOB.json > result.json      (JOB.json may be "-" for stdin)
    python3 runner.py --check JOB.json            (validate only, print the normalized job)

JOB.json is {"kind": ..., "params": {...}, "id": optional}. Kinds: gemm_sweep,
kernel_sweep, memory_ops, step, transformer_step, dlrm_step (cdplan's own DLRM
workload and recipe documents: dlrm_step.py) (PyTorch, CUDA or ROCm builds;
Triton for kernel_sweep) and cpu_selftest (standard library only). The result is one JSON
object on stdout; progress lines ("progress: ...") go to stderr; on failure the
last stderr line is {"error": {"code", "message", "field"?}} and the exit code is
  2  the job or the command line is invalid (codes bad_json, bad_field,
     missing_field, unknown_field, out_of_range, unsupported_dtype, bad_args)
  3  the host cannot run the kind (code unavailable: no torch, no GPU, no triton)
  1  the run failed (code internal)
  5  stopped by SIGTERM/SIGINT: the results gathered so far are written to stdout
     with "partial": true (only for the GPU kinds).
No shell is ever used; nothing from the job reaches a command line.
See README.md beside this file for the parameters and output formats.
"""
# The package beside this file (MANIFEST lists it; a bundle carries it whole):
#   job_schema.py  JobError, exit codes, the checkers params are declared with, the envelope
#   job_kinds.py   the kinds, read from kinds.def (the list validate/job.c compiles in)
#   job_state.py   the result being built, written as "partial" on SIGTERM/SIGINT
#   job_env.py     torch, the device and the timing method (Env), shared torch helpers
#   KIND.py        one module per kind: check_params(v, field), run(job, env, state)
import json
import sys
import time

import job_kinds
from job_schema import EXIT_FAILED, RUNNER_VERSION, JobError, load_job, validate_job
from job_state import STATE, catch_stop, emit
from kernel_sweep import default_kernel_configs  # noqa: F401 (compile_info.py, predict.py)

__all__ = ["main", "default_kernel_configs", "RUNNER_VERSION"]
USAGE = "usage: runner.py [--check] JOB.json|-  (result JSON on stdout)"


def main(argv):
    args = argv[1:]
    check_only = False
    if args and args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE + "\n" + __doc__)
        return 0
    if args and args[0] == "--version":
        sys.stdout.write(RUNNER_VERSION + "\n")
        return 0
    if args and args[0] == "--check":
        check_only = True
        args = args[1:]
    try:
        if len(args) != 1 or (args[0].startswith("-") and args[0] != "-"):
            raise JobError("bad_args", USAGE)
        kinds = job_kinds.load()
        job = validate_job(load_job(args[0]), kinds)
        if check_only:
            emit({"ok": True, "job": job})
            return 0
        kind = kinds[job["kind"]].module()
        if kinds[job["kind"]].gpus == 0:  # Python alone: no torch, no partial results
            emit(kind.run(job))
            return 0
        catch_stop()
        from job_env import Env  # noqa: PLC0415
        env = Env()
        t0 = time.time()
        res = kind.run(job, env, STATE)
        res["runner"] = RUNNER_VERSION
        res["started_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0))
        res["elapsed_s"] = time.time() - t0
        if env.cpu_mode:
            res["cpu_test_mode"] = True
        if "id" in job:
            res["id"] = job["id"]
        emit(res)
        return 0
    except JobError as e:
        sys.stderr.write(json.dumps(e.to_json()) + "\n")
        return e.rc
    except Exception as e:  # noqa: BLE001
        import traceback  # noqa: PLC0415
        traceback.print_exc(file=sys.stderr)
        err = JobError("internal", "%s: %s" % (type(e).__name__, str(e)[:500]), rc=EXIT_FAILED)
        sys.stderr.write(json.dumps(err.to_json()) + "\n")
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv))
