import sys, re, math, collections
# weighted (best/meas)^2 mean squared log error over the fit rows (H100 sets 2-32, H200 2-7 as 102-107) of a
# sc_overlap_grid.sh KEEP file: all rows and split-K rows. Usage: r30_loss.py KEEP_FILE LABEL
sh = collections.defaultdict(list)
for line in open(sys.argv[1]):
    t = line.split()
    if t[6] not in ('bf16', 'fp16'): continue
    s = int(t[1])
    if not (2 <= s <= 32 or 102 <= s <= 107): continue
    mm = re.search(r"(\d+)x\s*(\d+)x\s*(\d+) w(\d+) s(\d+) k(\d+)", line)
    kv = {t[i]: t[i+1] for i in range(len(t)-1)}
    sh[tuple(t[:7])].append((int(mm.group(6)), float(kv['pred']), float(kv['meas'])))
num = den = nums = dens = 0
for k, cf in sh.items():
    best = min(c[2] for c in cf)
    for sk, p, m in cf:
        w = (best / m) ** 2; e = math.log(p / m) ** 2
        num += w * e; den += w
        if sk > 1: nums += w * e; dens += w
print("%s loss all %.5f split %.5f" % (sys.argv[2], num / den, nums / dens))
