"""The gap to the oracle by time segment, per seed and in all (runs: see round.md, *Method*).

Usage: python3 segments.py SCENARIO WORKERS DIR EDGES SEED...   EDGES like 0,1,2,5,10,15
Per segment: the gap (oracle's answers in time less ours, as a share of the oracle's over the
run), the pool idle and the contention loss read off ours' occupancy samples (shares of the
run), the mean limit, the mean waiting inside, and the share of samples below the workers.
"""
import csv, sys, collections

sc, W, base = sys.argv[1], int(sys.argv[2]), sys.argv[3]
edges = [float(x) for x in sys.argv[4].split(",")]
seeds = sys.argv[5:]
segs = list(zip(edges, edges[1:]))
tot = collections.defaultdict(collections.Counter)
N = 0
R = 0
for seed in seeds:
    tl = list(csv.DictReader(open(f"{base}/{seed}/timeline_{sc}.csv")))
    ours = [r for r in tl if r["algorithm"] == "littles"]
    fc = {r["t_s"]: int(r["good"]) for r in tl if r["algorithm"] == "fixed_c"}
    ref = sum(fc.values())
    R += ref
    N += len(ours)
    row = []
    for a, b in segs:
        p = collections.Counter()
        for r in ours:
            t = float(r["t_s"])
            if not (a <= t < b):
                continue
            up = int(r["upstream"]); q = max(0, up - W)
            p["n"] += 1
            p["gap"] += fc.get(r["t_s"], 0) - int(r["good"])
            p["idle"] += max(0, W - up) / W
            p["over"] += (0.5 * q / W) / (1 + 0.5 * q / W)
            p["limit"] += int(r["limit"]); p["wait"] += q; p["below"] += up < W
        tot[(a, b)].update(p)
        row.append(f"{p['gap']/ref:+.4f}")
    print(f"seed {seed}: " + " ".join(f"[{a:g},{b:g}) {g}" for (a, b), g in zip(segs, row)))
print(f"{'segment':10s} {'gap':>7s} {'idle':>7s} {'over':>7s} {'limit':>6s} {'wait':>5s} {'below%':>6s}")
for s in segs:
    p = tot[s]
    n = max(p["n"], 1)
    print(f"[{s[0]:g},{s[1]:g}){'':4s} {p['gap']/R:+7.4f} {p['idle']/N:7.4f} {p['over']/N:7.4f} {p['limit']/n:6.1f} {p['wait']/n:5.2f} {100*p['below']/n:6.1f}")
