#!/bin/bash
# Device side of the blind awkward sweeps (issue 25): one call sweeps the sets named for whichever
# GPU came (H100_SETS or H200_SETS), each set's three committed job files
# (data/measurements/h200-awkwardN/jobs: the 16-bit kernel sweep, the cuBLAS gemm_sweep and its
# backlog-timed copy), and with REPEAT=1 the gemm_sweep a second time (blind_gemm_repeat.json).
# Each set goes to $OUT/w/sN with host.txt, blind_env.json, blind_log.txt and
# sha256_device.txt (the job files as the device saw them); $OUT/sweep_GPU.tgz is repacked after
# every set, so a call cut off at its limit still returns the sets done (the device tool returns
# at most 8 files). Run from the repository root, in the device tool's command:
#   export H100_SETS="81 82" H200_SETS="81 82" REPEAT=1; bash data/measurements/h100-awkfam/sweep/run_sets.sh
# About 70-80 s a set on an H100 (kernel sweep 30-50 s, each gemm_sweep about 8 s a pass, two
# passes from runner 1.1).
# Here, take_sweep.sh unpacks what came back into the sets' folders and scores it.
export PYTHONUNBUFFERED=1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$gpu" in *H100*) sets=$H100_SETS; tag=h100;; *) sets=$H200_SETS; tag=h200;; esac
echo "gpu: $gpu -> $tag sets: $sets"
w=$OUT/w; mkdir -p $w
t0=$SECONDS
for s in $sets; do
  d=$w/s$s; mkdir -p $d; j=data/measurements/h200-awkward$s/jobs
  sha256sum $j/*.json data/measurements/h200-awkward$s/problems.json > $d/sha256_device.txt
  nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm,power.limit --format=csv > $d/host.txt
  python3 - > "$d/blind_env.json" <<'PY'
import json, os, subprocess, time, platform
smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,power.limit", "--format=csv"], capture_output=True, text=True).stdout
import torch, triton
print(json.dumps({"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "python": platform.python_version(), "cpu_count": os.cpu_count(), "nvidia_smi": smi, "torch": torch.__version__, "cuda": torch.version.cuda, "triton": triton.__version__}, indent=1))
PY
  t0=$SECONDS
  run() { # label job outname limit
    timeout -s TERM "$4" python3 validate/gpu/runner.py "$j/$2.json" > "$d/$3.json" 2>> "$d/blind_log.txt"
    echo "$1 rc=$? $((SECONDS-t0))s" >> "$d/blind_log.txt"; }
  run kernel blind_kernel_16bit blind_kernel_16bit ${T16:-170}
  run gemm blind_gemm blind_gemm ${TG:-60}
  run gemmbl blind_gemmbl blind_gemmbl ${TG:-60}
  if [ "${REPEAT:-0}" = 1 ]; then run repeat blind_gemm blind_gemm_repeat ${TG:-60}; fi
  grep -E "rc=" $d/blind_log.txt | tr '\n' ' '; echo " [set $s]"
  (cd $w && tar czf $OUT/sweep_$tag.tgz .)   # repacked after every set: a cut-off call still returns the sets done
done
echo "done in $SECONDS s"
