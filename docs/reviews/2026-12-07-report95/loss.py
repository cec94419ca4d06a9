#!/usr/bin/env python3
"""Where report_gen's capacity goes, per seed: model loss per 0.1 s row, 1 - e(n),
e(n) = min(n,10)/10 / (1 + 0.05*max(n-11,0)) (n = requests in the upstream), by class."""
import csv, sys, os
W = 10
def eff(n):
    return min(n, W) / W / (1 + 0.5 * max(n - W - 1, 0) / W)
def one(d, scen="report_generator_1.5x"):
    tr = list(csv.DictReader(open(os.path.join(d, f"trace_{scen}.csv"))))
    tl = list(csv.DictReader(open(os.path.join(d, f"timeline_{scen}.csv"))))
    sc = list(csv.DictReader(open(os.path.join(d, "scorecard.csv"))))
    gp = float([r for r in sc if r["algorithm"] == "littles"][0]["goodput_per_possible"])
    first_steady = next((float(r["t_s"]) for r in tr if r["phase"] == "steady"), 1e9)
    cls = {}
    probes = []  # (start, depth, steered, held)
    cur = None
    for r, t in zip(tr, tl):
        ts = float(r["t_s"]); lim = int(r["limit"]); st = int(r["steered_limit"] or lim)
        n = int(t["upstream"])
        l = 1 - eff(n)
        if ts < first_steady:
            c = "start"
        elif r["phase"] == "probing" and lim < st:
            c = "probe_held"
        elif r["phase"] == "probing":
            c = "probe_tail"
        elif lim <= 9: c = "le9"
        elif lim == 10: c = "10"
        elif lim == 11: c = "11"
        else: c = "ge12"
        a = cls.setdefault(c, [0, 0.0]); a[0] += 1; a[1] += l
        held = c == "probe_held"
        if held and cur is None:
            cur = [ts, lim, st, 0.0, lim]
        if held:
            cur[3] += 0.1; cur[4] = min(cur[4], lim)
        if not held and cur is not None:
            probes.append(cur); cur = None
    if cur: probes.append(cur)
    rows = len(tr)
    return gp, {k: (v[0] / rows, v[1] / rows) for k, v in cls.items()}, probes
if __name__ == "__main__":
    keys = ["start", "probe_held", "probe_tail", "le9", "10", "11", "ge12"]
    print("| seed | goodput | model loss | " + " | ".join(f"{k} time/loss" for k in keys) + " | probes (t s: depth/steered, held s) |")
    print("|" + "---|" * (4 + len(keys)))
    tot = {k: [0, 0] for k in keys}; m = 0
    for d in sys.argv[1:]:
        gp, c, probes = one(d)
        loss = sum(v[1] for v in c.values())
        cells = [f"{c.get(k,(0,0))[0]:.2f}/{c.get(k,(0,0))[1]:.3f}" for k in keys]
        for k in keys:
            tot[k][0] += c.get(k,(0,0))[0]; tot[k][1] += c.get(k,(0,0))[1]
        m += 1
        ps = "; ".join(f"{p[0]:.0f}: {p[4]}/{p[2]}, {p[3]:.1f}" for p in probes)
        print(f"| {os.path.basename(d)} | {gp:.3f} | {loss:.3f} | " + " | ".join(cells) + f" | {ps} |")
    print("| mean | | | " + " | ".join(f"{tot[k][0]/m:.2f}/{tot[k][1]/m:.3f}" for k in keys) + " | |")
