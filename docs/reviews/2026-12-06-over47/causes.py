"""The steady state's loss by cause, from ours' occupancy samples (runs: see round.md, *Method*).

Usage: python3 causes.py SCENARIO WORKERS DIR FROM TO SEED...
Every 100 ms sample of ours in [FROM, TO) s is costed from the requests at the upstream:
below the workers, the idle share (W - n) / W; above, the contention of the q = n - W waiting
inside (each request that starts service while q wait takes 1 + 0.5 q / W longer). Filed as:
a probe (the trace's phase), below the workers outside probes, the target queue (1-2 waiting),
an excursion (3 or more waiting). Also the floor's error in requests (the trace's floor less
the service's true 5th percentile, TRUE_LOW_MS, times the pass rate) outside probes.
"""
import csv, sys, collections, math

sc, W, base, t0, t1 = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
seeds = sys.argv[6:]
TRUE_LOW_MS = -math.log(0.95) * 50.0  # exponential service of 50 ms
cost = collections.Counter(); n = 0
ferr = []
for seed in seeds:
    tl = [r for r in csv.DictReader(open(f"{base}/{seed}/timeline_{sc}.csv")) if r["algorithm"] == "littles"]
    tr = [r for r in csv.DictReader(open(f"{base}/{seed}/trace_{sc}.csv")) if r["algorithm"] == "littles"]
    for a, b in zip(tl, tr):
        t = float(a["t_s"])
        if not (t0 <= t < t1):
            continue
        n += 1
        up = int(a["upstream"]); q = max(0, up - W)
        idle = max(0, W - up) / W
        over = (0.5 * q / W) / (1 + 0.5 * q / W)
        if b["phase"] == "probing":
            cost["probe"] += idle + over
        elif up < W:
            cost["below the workers"] += idle
        elif q <= 2:
            cost["target queue (1-2 waiting)"] += over
        else:
            cost["excursion (3+ waiting)"] += over
        if b["phase"] != "probing" and b["floor_rt_ms"] and b["pass_rate"]:
            ferr.append((float(b["floor_rt_ms"]) - TRUE_LOW_MS) * float(b["pass_rate"]) / 1000)
print(f"{len(seeds)} seeds, {t0:g}-{t1:g} s, share of the pool over those seconds:")
for k, v in sorted(cost.items(), key=lambda kv: -kv[1]):
    print(f"  {k:28s} {v / n:.4f}")
print(f"  {'all':28s} {sum(cost.values()) / n:.4f}")
if ferr:
    ferr.sort()
    m = sum(ferr) / len(ferr)
    mad = sum(abs(x) for x in ferr) / len(ferr)
    print(f"floor error, requests (outside probes): mean {m:+.2f}, mean |error| {mad:.2f}, "
          f"10th/50th/90th pct {ferr[len(ferr)//10]:+.2f} / {ferr[len(ferr)//2]:+.2f} / {ferr[9*len(ferr)//10]:+.2f}")
