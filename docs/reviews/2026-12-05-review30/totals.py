#!/usr/bin/env python3
"""review30: per run, the main load plus spawned loads (results/NAME.spawnN.out): goodput, refused %, p50/p99 of each, limit samples min-max, upstream max in flight."""
import glob, json, os, sys
H = os.path.dirname(os.path.abspath(__file__))
print("| run | goodput/s (main; spawns) | refused % (gate) | p50/p99 main | spawns p50/p99 | limit min–max (end) | upstream max |")
print("|---|---|---|---|---|---|---|")
for f in sorted(glob.glob(os.path.join(H, "results/*.json"))):
    r = json.load(open(f)); n = r["name"]
    if sys.argv[1:] and not any(n.startswith(p) for p in sys.argv[1:]): continue
    l = r["load"]; sp = []
    for s in sorted(glob.glob(os.path.join(H, "results", n + ".spawn*.out"))):
        try: sp.append(json.loads(open(s).read().strip().splitlines()[-1]))
        except Exception: pass
    sent = l["sent"] + sum(x["sent"] for x in sp)
    rej = sum(v for k, v in l.get("by_reason", {}).items() if k != "-") + sum(sum(v for k, v in x.get("by_reason", {}).items() if k != "-") for x in sp)
    lim = [s["limit"] for s in r["samples"] if s.get("limit") is not None][1:-1] or [None]
    lims = "—" if lim[0] in (None, 2000000) else f"{min(lim)}–{max(lim)} ({lim[-1]})"
    sps = "; ".join(f"{x['goodput']:.0f}" for x in sp)
    spl = "; ".join(f"{x['p50_ms']:.0f}/{x['p99_ms']:.0f}" for x in sp)
    print(f"| {n} | {l['goodput']:.0f}{' ; ' + sps if sps else ''} | {100*rej/max(sent,1):.1f} | {l['p50_ms']:.0f}/{l['p99_ms']:.0f} | {spl or '—'} | {lims} | {(r.get('upstream') or {}).get('max_in_flight')} |")
