"""The runner's job language: JobError and its exit codes, the checkers a kind's
parameters are declared with (v_int, v_num, v_enum, v_list, v_obj, ...), reading a job
file, and the job envelope {"kind", "params", "id"}. Standard library only: --check and
cpu_selftest run without torch.

Every checker takes (value, field) and returns the normalized value or raises JobError
naming the field ("params.cases[2].dim"). A kind module (one per kind: gemm_sweep.py,
step.py, ...) exposes check_params(v, field), built from these, and run(job, env, state).
"""
import json
import math
import sys

RUNNER_VERSION = "1.1"
MAX_JOB_BYTES = 1 << 20

EXIT_FAILED, EXIT_INVALID, EXIT_UNAVAILABLE, EXIT_STOPPED = 1, 2, 3, 5


class JobError(Exception):
    """An error reported as {"error": {...}} with an exit code."""

    def __init__(self, code, message, field=None, rc=EXIT_INVALID):
        super().__init__(message)
        self.code, self.message, self.field, self.rc = code, message, field, rc

    def to_json(self):
        e = {"code": self.code, "message": self.message}
        if self.field is not None:
            e["field"] = self.field
        return {"error": e}


def progress(msg):
    sys.stderr.write("progress: " + msg + "\n")
    sys.stderr.flush()


# ----------------------------------------------------------------------------
# checkers
# ----------------------------------------------------------------------------

REQUIRED = object()
OPTIONAL = object()


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _ranged(ok, what, bounds, lo, hi):
    """A check that v passes ok ("FIELD must be WHAT") and lies in [lo, hi]
    (bounds: the message's format of them)."""
    def check(v, field):
        if not ok(v):
            raise JobError("bad_field", "%s must be %s" % (field, what), field)
        if not lo <= v <= hi:
            raise JobError("out_of_range", ("%s must be in " + bounds) % (field, lo, hi), field)
        return v
    return check


def _is_num(v):
    return not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)


def v_int(lo, hi):
    return _ranged(_is_int, "an integer", "[%d, %d]", lo, hi)


def v_num(lo, hi):
    return _ranged(_is_num, "a number", "[%g, %g]", lo, hi)


def v_bool(v, field):
    if not isinstance(v, bool):
        raise JobError("bad_field", "%s must be true or false" % field, field)
    return v


def v_enum(*choices, code="bad_field"):
    def check(v, field):
        if not isinstance(v, str) or v not in choices:
            raise JobError(code, "%s must be one of %s" % (field, ", ".join(choices)), field)
        return v
    return check


def v_list(item, lo=1, hi=10000, unique=False):
    def check(v, field):
        if not isinstance(v, list):
            raise JobError("bad_field", "%s must be an array" % field, field)
        if not lo <= len(v) <= hi:
            raise JobError("out_of_range", "%s must have %d to %d items" % (field, lo, hi), field)
        out = [item(x, "%s[%d]" % (field, i)) for i, x in enumerate(v)]
        if unique and len(set(json.dumps(x, sort_keys=True) for x in out)) != len(out):
            raise JobError("bad_field", "%s has duplicate items" % field, field)
        return out
    return check


def v_obj(spec):
    """spec: name -> (checker, default); default REQUIRED marks a required field,
    OPTIONAL one left out of the result when absent."""
    def check(v, field):
        if not isinstance(v, dict):
            raise JobError("bad_field", "%s must be an object" % field, field)
        out = {}
        for k in v:
            if k not in spec:
                f = "%s.%s" % (field, k) if field else k
                raise JobError("unknown_field", "unknown field %s" % f, f)
        for k, (chk, default) in spec.items():
            f = "%s.%s" % (field, k) if field else k
            if k in v:
                out[k] = chk(v[k], f)
            elif default is REQUIRED:
                raise JobError("missing_field", "%s is required" % f, f)
            elif default is not OPTIONAL:
                out[k] = default
        return out
    return check


def v_nullable(chk):
    def check(v, field):
        return None if v is None else chk(v, field)
    return check


def v_pow2(lo, hi):
    base = v_int(lo, hi)

    def check(v, field):
        base(v, field)
        if v & (v - 1):
            raise JobError("bad_field", "%s must be a power of two" % field, field)
        return v
    return check


# Members of a document read one at a time (the transformer_step and dlrm_step kinds
# take cdplan's own workload and recipe documents, whose defaults depend on each other).


def sub(field, k):
    return "%s.%s" % (field, k)


def get_int(d, k, field, lo, hi, default=None):
    """d[k] as an integer in [lo, hi]; default when absent (None: required)."""
    if k not in d:
        if default is None:
            raise JobError("missing_field", "%s is required" % sub(field, k), sub(field, k))
        return default
    return v_int(lo, hi)(d[k], sub(field, k))


def get_enum(d, k, field, choices, default=None, code="bad_field"):
    """d[k] as one of choices; default when absent (None: the first choice)."""
    if k not in d:
        return choices[0] if default is None else default
    return v_enum(*choices, code=code)(d[k], sub(field, k))


def check_members(d, allowed, field):
    """d must be an object with no member outside allowed."""
    if not isinstance(d, dict):
        raise JobError("bad_field", "%s must be an object" % field, field)
    for k in d:
        if k not in allowed:
            raise JobError("unknown_field", "unknown field %s" % sub(field, k), sub(field, k))


def check_cases(v, field, allowed, most, check_case):
    """v: an object with members within allowed and "cases", a list of 1 to most cases;
    returns the cases, each checked by check_case(c, "FIELD.cases[i]")."""
    check_members(v, allowed, field)
    cases = v.get("cases")
    if not isinstance(cases, list) or not 1 <= len(cases) <= most:
        raise JobError("missing_field" if cases is None else "bad_field",
                       "%s.cases must be an array of 1 to %d cases" % (field, most),
                       field + ".cases")
    return [check_case(c, "%s.cases[%d]" % (field, i)) for i, c in enumerate(cases)]


# ----------------------------------------------------------------------------
# the job file and its envelope
# ----------------------------------------------------------------------------


def load_job(path):
    try:
        if path == "-":
            raw = sys.stdin.buffer.read(MAX_JOB_BYTES + 1)
        else:
            with open(path, "rb") as f:
                raw = f.read(MAX_JOB_BYTES + 1)
    except OSError as e:
        raise JobError("bad_args", "cannot read %s: %s" % (path, e.strerror or e))
    if len(raw) > MAX_JOB_BYTES:
        raise JobError("out_of_range", "the job file is larger than 1 MiB")

    def no_const(c):
        raise ValueError("invalid number %s" % c)
    try:
        job = json.loads(raw.decode("utf-8"), parse_constant=no_const)
    except (ValueError, UnicodeDecodeError) as e:
        raise JobError("bad_json", "the job is not valid JSON: %s" % e)
    return job


def validate_job(job, kinds):
    """The normalized job; kinds maps each kind's name to its module (job_kinds.py)."""
    if not isinstance(job, dict):
        raise JobError("bad_field", "the job must be a JSON object", "")
    for k in job:
        if k not in ("kind", "params", "id"):
            raise JobError("unknown_field", "unknown field %s" % k, k)
    if "kind" not in job:
        raise JobError("missing_field", "kind is required", "kind")
    kind = job["kind"]
    if not isinstance(kind, str) or kind not in kinds:
        raise JobError("bad_field", "kind must be one of %s" % ", ".join(sorted(kinds)), "kind")
    jid = job.get("id")
    if jid is not None:
        if isinstance(jid, bool) or not isinstance(jid, (str, int)):
            raise JobError("bad_field", "id must be a string or an integer", "id")
        if isinstance(jid, str) and len(jid) > 256:
            raise JobError("out_of_range", "id must be at most 256 characters", "id")
    params = job.get("params", {})
    if not isinstance(params, dict):
        raise JobError("bad_field", "params must be an object", "params")
    params = kinds[kind].module().check_params(params, "params")
    out = {"kind": kind, "params": params}
    if jid is not None:
        out["id"] = jid
    return out


# ----------------------------------------------------------------------------
# the timing fields of the sweeps (gemm_sweep, kernel_sweep, memory_ops): Env.bench
# ----------------------------------------------------------------------------

TIMING = {
    "warmup": (v_int(0, 1000), None),
    "iters": (v_nullable(v_int(1, 100000)), None),
    "time_budget_ms": (v_num(0.1, 60000), 30.0),
    "min_iters": (v_int(1, 100000), 10),
    "max_iters": (v_int(1, 100000), 200),
    "flush_mib": (v_int(0, 8192), 256),
    # > 0: a GPU spin of this many microseconds (torch.cuda._sleep) is queued before each
    # timed call, so the events time the GPU work alone, not the host's launch path
    # (Triton's Python launcher outran the L2 flush on kernels of a few microseconds).
    "backlog_us": (v_num(0, 100000), 0),
}


def check_timing(params):
    if params["min_iters"] > params["max_iters"]:
        raise JobError("out_of_range", "min_iters must not exceed max_iters", "params.min_iters")
    return params
