#!/bin/sh
# bench/fuzz_long.sh: the longer fuzz run (CI runs 20 s per target; this
# runs FUZZ_SECONDS, default 600, per target, one job per core). Builds the
# libFuzzer targets with clang in build-fuzz/ and keeps what it finds:
# new inputs under build-fuzz/corpus/<target>, crashes as
# build-fuzz/crash-* (reproduce: build-fuzz/fuzz/fuzz_<target> FILE).
# Not part of `make bench` (it needs clang and a build of its own).
# usage: bench/fuzz_long.sh [TARGET...]   (default: every fuzz/corpus/* dir)
set -eu
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-600}
CC=clang cmake -S . -B build-fuzz -DCDPLAN_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz --target fuzz -j "$(nproc)"
targets=${*:-$(ls fuzz/corpus)}
status=0
for t in $targets; do
  mkdir -p "build-fuzz/corpus/$t"
  echo "fuzz_$t: $secs s"
  (cd build-fuzz && ./fuzz/fuzz_"$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -jobs="$(nproc)" -workers="$(nproc)" -print_final_stats=1 \
    "corpus/$t" "../fuzz/corpus/$t") || status=1
done
exit $status
