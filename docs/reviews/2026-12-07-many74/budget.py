"""Loss budget per seed against the same seed's fixed_c run (per 100 ms bins).
Usage: budget.py SCENARIO WORKERS DIR SEED...   (DIR/SEED/timeline_SC.csv and trace_SC.csv)
Bins (by the limit's bin, answers taken one bin later for the lag of ~1 mean RT... lag=LAG env):
 start: until the first leap (limit still at the starting limit)
 growth: from the first leap to the first bin after the limit first reached W where it is within 1.05 W
 probe: phase == probing (after growth)
 steady: the rest; split by mean over-workers and contention estimate
"""
import csv, sys, os, collections
sc, W, base = sys.argv[1], int(sys.argv[2]), sys.argv[3]
seeds = sys.argv[4:]
lag = int(os.environ.get("LAG", "1"))
acc = collections.Counter(); accR = 0
for s in seeds:
    tl = list(csv.DictReader(open(f"{base}/{s}/timeline_{sc}.csv")))
    tr = [r for r in csv.DictReader(open(f"{base}/{s}/trace_{sc}.csv")) if r["algorithm"] == "littles"]
    o = [r for r in tl if r["algorithm"] == "littles"]
    f = [r for r in tl if r["algorithm"] == "fixed_c"]
    n = min(len(o), len(f))
    lim = [int(r["limit"]) for r in o]
    up = [int(r["upstream"]) for r in o]
    ph = [r["phase"] for r in tr]
    L0 = lim[0]
    t_leap = next((i for i in range(n) if lim[i] != L0), n)
    t_reach = next((i for i in range(n) if lim[i] >= W), n)
    t_settle = next((i for i in range(t_reach, n) if lim[i] <= 1.05 * W), n)
    R = sum(int(r["good"]) for r in f); accR += R
    c = collections.Counter(); cont = 0.0; steadyn = 0; overw = 0.0
    for i in range(n):
        d = int(f[i]["good"]) - int(o[i]["good"])
        j = max(0, i - lag)
        if j < t_leap: k = "start"
        elif j < t_settle: k = "growth"
        elif ph[j] == "probing" or (j>0 and ph[j-1]=="probing"): k = "probe"
        else:
            k = "steady"
            q = max(0, up[i] - W)
            cont += (0.5 * q / W) / (1 + 0.5 * q / W); steadyn += 1; overw += lim[i] - W
        c[k] += d
    acc.update(c)
    so = sum(int(r["good"]) for r in o)
    print(f"seed {s}: ours/oracle {so/R:.4f} gap {1-so/R:.4f} | leap {t_leap/10:.1f}s reach {t_reach/10:.1f}s settle {t_settle/10:.1f}s | "
          + " ".join(f"{k} {c[k]/R:+.4f}" for k in ("start","growth","probe","steady"))
          + f" | steady bins {steadyn} mean limit-W {overw/max(steadyn,1):.1f} contention-est {cont/ n:.4f}")
print("all: " + " ".join(f"{k} {acc[k]/accR:+.4f}" for k in ("start","growth","probe","steady")) + f" total {sum(acc.values())/accR:+.4f}")
