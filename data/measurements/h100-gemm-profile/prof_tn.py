"""Issue 25, after sets 39-44: which cuBLAS kernels and grids the unaligned `tn` wgrad GEMMs
1024x479xK run where the model prices them 18-34 % fast (K = 136-408, bf16, fp16 and tf32) and
on either side of that range (K = 64, 1000, 1632), with 1024x219x64 `tn` (priced +50 %) beside
them. Same method as prof_split.py (its main, these shapes).

    python3 prof_tn.py OUT.json
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prof_split import main  # noqa: E402

SHAPES = [(1024, 479, k, "tn") for k in (64, 136, 264, 408, 1000, 1632)] + [(1024, 219, 64, "tn")]

if __name__ == "__main__":
    main(SHAPES, sys.argv[1])
