"""The result a GPU kind is building, and what happens to it on SIGTERM/SIGINT.

A kind's run() stores its result object in state["result"] as soon as it has one and
fills it in place; when the runner is stopped (a batch limit, scancel, Ctrl-C) the handler
writes what is there with "partial": true and exits EXIT_STOPPED. emit() writes a result
once, as strict JSON (non-finite floats become null).
"""
import json
import math
import os
import signal
import sys

from job_schema import EXIT_STOPPED, JobError

STATE = {"result": None, "emitted": False}


def _clean(x):
    """Replace non-finite floats by None so the output is strict JSON."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def emit(result):
    if STATE["emitted"]:
        return
    STATE["emitted"] = True
    sys.stdout.write(json.dumps(_clean(result), indent=1, allow_nan=False) + "\n")
    sys.stdout.flush()


def _on_signal(signum, _frame):
    res = STATE["result"]
    if res is not None and not STATE["emitted"]:
        res = dict(res)
        res["partial"] = True
        res["stopped_by"] = signal.Signals(signum).name
        try:
            emit(res)
        except Exception:  # noqa: BLE001 - best effort while stopping
            pass
    err = JobError("internal", "stopped by %s" % signal.Signals(signum).name, rc=EXIT_STOPPED)
    sys.stderr.write(json.dumps(err.to_json()) + "\n")
    sys.stderr.flush()
    os._exit(EXIT_STOPPED)


def catch_stop():
    """From now on SIGTERM and SIGINT write the partial result and exit."""
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
