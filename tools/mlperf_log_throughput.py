#!/usr/bin/env python3
"""Training throughput of an MLPerf Training submission from its result logs.

Usage: mlperf_log_throughput.py DIR TOKENS_PER_SAMPLE GPUS
  DIR holds the submission's result_*.txt (MLLOG lines). Per run: the median
  of the logged `tracked_stats` `throughput` (samples/s of the whole job,
  AMD's callbacks) or, where a log has none, global_batch_size / the median
  `train_step_time` (NVIDIA's NeMo callbacks). Prints each run and the
  median over runs in samples/s and tokens/s/GPU (x TOKENS_PER_SAMPLE /
  GPUS). How the rows of data/measurements/published/llm_training.json
  from MLPerf v5.1 were derived (LLM.md there).
"""
import glob
import json
import statistics
import sys


def run_rate(path):
    thr, steps, gbs = [], [], None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if ":::MLLOG" not in line:
                continue
            rec = json.loads(line.split(":::MLLOG", 1)[1])
            key, val = rec.get("key"), rec.get("value")
            if key == "global_batch_size":
                gbs = val
            elif key == "tracked_stats" and isinstance(val, dict):
                if "throughput" in val:
                    thr.append(val["throughput"])
                if "train_step_time" in val:
                    steps.append(val["train_step_time"])
    if thr:
        return statistics.median(thr)
    if steps and gbs:
        return gbs / statistics.median(steps)
    return None


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    tokens, gpus = float(sys.argv[2]), float(sys.argv[3])
    rates = []
    for path in sorted(glob.glob(sys.argv[1] + "/result_*.txt")):
        r = run_rate(path)
        if r is not None:
            rates.append(r)
            print("%s %.4f samples/s" % (path, r))
    if not rates:
        sys.exit("no throughput in %s" % sys.argv[1])
    med = statistics.median(rates)
    print("runs %d: median %.4f samples/s (%.4f-%.4f) = %.0f tokens/s/GPU"
          % (len(rates), med, min(rates), max(rates), med * tokens / gpus))


if __name__ == "__main__":
    main()
