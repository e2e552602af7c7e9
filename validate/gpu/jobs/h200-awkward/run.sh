#!/bin/bash
# One device call for the h200-awkward sweeps: run.sh HALF (fit|blind) GPU_DIR OUT.
# Each job under a time limit (a stopped runner still prints its partial result).
half=$1; gpu=$2; out=$3; jobs=$(dirname "$0")
export PYTHONUNBUFFERED=1
python3 - > "$out/env.json" <<'PY'
import json, os, subprocess, time, platform
smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,power.limit", "--format=csv"], capture_output=True, text=True).stdout
import torch, triton
print(json.dumps({"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "python": platform.python_version(), "cpu_count": os.cpu_count(), "nvidia_smi": smi, "torch": torch.__version__, "cuda": torch.version.cuda, "triton": triton.__version__}, indent=1))
PY
t0=$SECONDS
timeout -s TERM ${T16:-170} python3 "$gpu/runner.py" "$jobs/${half}_kernel_16bit.json" > "$out/kernel_16bit.json" 2> "$out/log.txt"
echo "16bit rc=$? at $((SECONDS-t0)) s" >> "$out/log.txt"
timeout -s TERM ${TG:-30} python3 "$gpu/runner.py" "$jobs/${half}_gemm.json" > "$out/gemm.json" 2>> "$out/log.txt"
echo "gemm rc=$? at $((SECONDS-t0)) s" >> "$out/log.txt"
timeout -s TERM ${TT:-45} python3 "$gpu/runner.py" "$jobs/${half}_kernel_tf32.json" > "$out/kernel_tf32.json" 2>> "$out/log.txt"
echo "tf32 rc=$? at $((SECONDS-t0)) s" >> "$out/log.txt"
timeout -s TERM ${T8:-30} python3 "$gpu/runner.py" "$jobs/${half}_kernel_fp8.json" > "$out/kernel_fp8.json" 2>> "$out/log.txt"
echo "fp8 rc=$? at $((SECONDS-t0)) s" >> "$out/log.txt"
grep -E "precompiled|rc=|Error|error" "$out/log.txt" | tail -30
