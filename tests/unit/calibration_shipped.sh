#!/bin/sh
# The shipped calibrations (data/calibration/*.json, seeded into every new
# database) are what data/calibration/generate.sh fits to the committed
# measurement files: regenerate them into a temporary folder and compare
# every number (relative 1e-9: the fit is deterministic, the tolerance only
# absorbs a different compiler's last bit) and every string; "version" is
# the database's numbering and not compared.
# usage: calibration_shipped.sh SOURCE_DIR CDPLAN
set -eu
src=$1
cdplan=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$src"
data/calibration/generate.sh "$cdplan" "$tmp" 2>/dev/null
python3 - "$src/data/calibration" "$tmp" <<'PY'
import json, math, os, sys
shipped, fresh = sys.argv[1], sys.argv[2]
def same(a, b, path):
    if isinstance(a, dict) and isinstance(b, dict):
        ka = set(a) - {"version"}
        kb = set(b) - {"version"}
        if ka != kb:
            return "%s: keys differ: %s" % (path, sorted(ka ^ kb))
        for k in sorted(ka):
            r = same(a[k], b[k], path + "." + k)
            if r: return r
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b): return "%s: %d vs %d items" % (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            r = same(x, y, "%s[%d]" % (path, i))
            if r: return r
        return None
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if a == b or (math.isfinite(a) and abs(a - b) <= 1e-9 * max(abs(a), abs(b))):
            return None
        return "%s: shipped %r, regenerated %r" % (path, a, b)
    return None if a == b else "%s: shipped %r, regenerated %r" % (path, a, b)
names = sorted(f for f in os.listdir(shipped) if f.endswith(".json"))
made = sorted(f for f in os.listdir(fresh) if f.endswith(".json"))
if names != made:
    sys.exit("shipped files %s, generate.sh writes %s" % (names, made))
bad = 0
for f in names:
    r = same(json.load(open(os.path.join(shipped, f))), json.load(open(os.path.join(fresh, f))), f)
    if r:
        print("calibration_shipped: %s (rerun data/calibration/generate.sh)" % r)
        bad = 1
print("calibration_shipped: %d file(s) %s" % (len(names), "differ" if bad else "reproduced"))
sys.exit(bad)
PY
