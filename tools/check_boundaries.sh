#!/bin/sh
# check_boundaries.sh: the module graph of DESIGN.md, enforced on the
# sources (ctest arch_boundaries; issue 28). Four rules:
#  1. a module's private header (<mod>/<name>_int.h) is included by files of
#     that module only -- never by another module, the benchmarks or the CLI;
#  2. a module includes headers only of the modules it may depend on (the
#     same graph the CMake link lines state): data flows transport -> api ->
#     hwdb/costmodel/planner/validate, never back;
#  3. a public api header (api/*.h but *_int.h) includes no cJSON header:
#     what the front ends and benchmarks see takes text and returns structs
#     (api/api_meas.h); the cJSON-typed decoders are in api/api_int.h.
#  4. no public api header names a cJSON type (not even a forward-declared
#     struct cJSON): front ends get text or typed replies.
# tests/ and fuzz/ are white-box (a test may include the private header of
# the module it tests) and are not checked. bench/ is checked like any
# module, with no exceptions: a benchmark reaches a module's insides only
# through its public functions (planner.h's plan_emb_brute_force,
# plan_emb_root_lp, plan_emb_costs; costmodel.h's cost_params_resolve and
# cost_collective_p; api_val_opts.max_body). Prints each offence and exits
# 1 when there is one.
# usage: tools/check_boundaries.sh [SOURCE_DIR]
set -u
src=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$src" || exit 2

allowed() {
  case $1 in
  common) echo "common" ;;
  costmodel) echo "costmodel common" ;;
  hwdb) echo "hwdb common" ;;
  planner) echo "planner costmodel common" ;;
  validate) echo "validate hwdb common" ;;
  api) echo "api hwdb costmodel planner validate common" ;;
  server) echo "server api common" ;;
  cli) echo "cli server api common" ;;
  bench) echo "bench api costmodel planner common" ;;
  esac
}

tmpf=$(mktemp) || exit 2
trap 'rm -f "$tmpf"' EXIT
for mod in common costmodel hwdb planner validate api server cli bench; do
  [ -d "$mod" ] || continue
  ok=$(allowed "$mod")
  for f in "$mod"/*.c "$mod"/*.h; do
    [ -f "$f" ] || continue
    # every #include "dir/file.h" of the project (system headers use <>)
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z_]*\)\/\([A-Za-z0-9_.]*\)".*/\1 \2/p' "$f" |
      while read -r dir hdr; do
        case " $ok " in
        *" $dir "*) ;;
        *)
          echo "$f: includes $dir/$hdr, but $mod may not depend on $dir"
          echo x >>"$tmpf"
          ;;
        esac
        case $hdr in
        *_int.h)
          if [ "$dir" != "$mod" ]; then
            echo "$f: includes $dir/$hdr, a private header of $dir"
            echo x >>"$tmpf"
          fi
          ;;
        esac
      done
  done
done
for f in api/*.h; do
  case $f in *_int.h) continue ;; esac
  [ -f "$f" ] || continue
  if grep -Eq '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]cjson/' "$f"; then
    echo "$f: a public api header includes cJSON (move the cJSON-typed part to api/api_int.h)"
    echo x >>"$tmpf"
  fi
  if grep -Eq '(struct[[:space:]]+cJSON[[:space:]]*;|cJSON[[:space:]]*\*)' "$f"; then
    echo "$f: a public api header exposes a cJSON type (take or return text or structs)"
    echo x >>"$tmpf"
  fi
done
if [ -s "$tmpf" ]; then
  echo "check_boundaries: $(wc -l <"$tmpf") offence(s)"
  exit 1
fi
echo "check_boundaries: ok"
