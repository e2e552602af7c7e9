# tests/validate/scratch.sh: the opening the runner's shell tests share,
# sourced (`. "$(dirname "$0")/scratch.sh"`) once TAG and PY are set: a
# scratch folder $T (/tmp/cdplan-$TAG-XXXXXX, removed on exit), fail
# MESSAGE (exit 1), field FILE EXPR (a member of a JSON file, EXPR as
# '["id"]', read with $PY).
T=$(mktemp -d "/tmp/cdplan-$TAG-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
field() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval("d"+sys.argv[2]))' "$@"; }
