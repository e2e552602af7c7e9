#!/bin/sh
# check_boundaries_probe.sh: ctest arch_boundaries_probe -- shows that
# tools/check_boundaries.sh can fail: it plants one offence of each rule in
# a scratch source tree (another module's _int.h, a forbidden module, a
# public api header that includes cJSON or declares a cJSON type, a
# benchmark that includes a private header or a module bench may not use)
# and expects each to be named and
# the check to exit 1; a clean tree must pass.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/cdplan-probe-XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/api" "$tmp/server" "$tmp/costmodel" "$tmp/bench"
printf '#include <stddef.h>\n#include "api/api.h"\n' >"$tmp/api/api_ok.h"
if ! sh "$here/check_boundaries.sh" "$tmp" >/dev/null; then
  echo "probe: a clean tree failed"
  exit 1
fi
fail=0
plant() { # plant FILE TEXT EXPECTED_MESSAGE
  printf '%s\n' "$2" >"$tmp/$1"
  out=$(sh "$here/check_boundaries.sh" "$tmp")
  rc=$?
  rm -f "$tmp/$1"
  case $out in *"$3"*) ;; *) rc=0 ;; esac
  if [ "$rc" -ne 1 ]; then
    echo "probe: $1 ($2) was not caught"
    fail=1
  fi
}
plant api/api_bad.h '#include <cjson/cJSON.h>' "a public api header includes cJSON"
plant server/bad.c '#include "api/api_int.h"' "a private header of api"
plant costmodel/bad.c '#include "planner/planner.h"' "may not depend on planner"
plant api/api_fwd.h 'struct cJSON;' "a public api header exposes a cJSON type"
plant bench/bad.c '#include "planner/planner_int.h"' "a private header of planner"
plant bench/bad2.c '#include "validate/validate.h"' "may not depend on validate"
[ $fail -eq 0 ] && echo "check_boundaries probe: ok"
exit $fail
