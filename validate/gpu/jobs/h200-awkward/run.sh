#!/bin/bash
# One device call for the h200-awkward sweeps: run.sh HALF GPU_DIR OUT [REFIT]
# HALF (fit|blind): its 16-bit, tf32 and fp8 kernel sweeps and its gemm sweep;
# REFIT (a job-file prefix, e.g. refit): its 16-bit kernel sweep after them.
# Each job under a time limit (a stopped runner still prints its partial result).
half=$1; gpu=$2; out=$3; refit=$4; jobs=$(dirname "$0")
export PYTHONUNBUFFERED=1
python3 - > "$out/env.json" <<'PY'
import json, os, subprocess, time, platform
smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,power.limit", "--format=csv"], capture_output=True, text=True).stdout
import torch, triton
print(json.dumps({"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "python": platform.python_version(), "cpu_count": os.cpu_count(), "nvidia_smi": smi, "torch": torch.__version__, "cuda": torch.version.cuda, "triton": triton.__version__}, indent=1))
PY
t0=$SECONDS
run() {  # name limit_s
  timeout -s TERM "$2" python3 "$gpu/runner.py" "$jobs/$1.json" > "$out/$1.json" 2>> "$out/log.txt"
  echo "$1 rc=$? at $((SECONDS-t0)) s" >> "$out/log.txt"
}
run "${half}_kernel_16bit" ${T16:-170}
run "${half}_gemm" ${TG:-30}
run "${half}_kernel_tf32" ${TT:-45}
run "${half}_kernel_fp8" ${T8:-30}
[ -n "$refit" ] && run "${refit}_kernel_16bit" ${T16:-170}
grep -E "precompiled|rc=|Error|error" "$out/log.txt" | tail -30
