#!/usr/bin/env python3
"""Table of runs from results/*.json (markdown). table2.py [PREFIX...]
goodput = 2xx/s; p50/p99 of 2xx (ms); rejected = the gate's own refusals / sent (the upstream's
own 503s, reason '-', left out); limit = min-max of the per-second samples (first and last left
out) and the last; upstream = most requests the upstream held at once."""
import glob, json, os, sys
pre = sys.argv[1:] or [""]
print("| run | load | goodput/s | p50 | p99 | rejected | gave up | limit | upstream |")
print("|---|---|---|---|---|---|---|---|---|")
for f in sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "results/*.json"))):
    r = json.load(open(f))
    if not any(r["name"].startswith(p) for p in pre): continue
    lim = [s["limit"] for s in r["samples"] if s.get("limit") is not None][1:-1] or [None]
    lims = "—" if lim[0] in (None, 2000000) else f"{min(lim)}–{max(lim)} (end {lim[-1]})"
    for l in r.get("loads", [r["load"]]):
        if "sent" not in l: continue
        sent = l["sent"] or 1
        rej = sum(v for k, v in l.get("by_reason", {}).items() if k != "-")
        path = "" if l.get("path", "/") == "/" else l["path"] + " "
        print(f"| {r['name']} | {path}{l.get('args', r['args'].get('load'))} | {l['goodput']:.0f} | {l['p50_ms']:.0f} | {l['p99_ms']:.0f} | "
              f"{100*rej/sent:.1f} % | {l['gave_up']} | {lims} | {(r.get('upstream') or {}).get('max_in_flight')} |")
