#!/usr/bin/env python3
"""Prints the table of runs from results/*.json (markdown)."""
import glob, json, os
rows = []
for f in sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "results/*.json"))):
    r = json.load(open(f)); l = r["load"]
    if "sent" not in l: continue
    lim = [s["limit"] for s in r["samples"] if "limit" in s][1:-1] or [None]
    lims = "—" if lim[0] == 2000000 else f"{min(lim)}–{max(lim)} (end {lim[-1]})"
    sent = l["sent"] or 1
    gw = {k: v for k, v in l.get("by_reason", {}).items() if k != "-"}
    rej = sum(gw.values())
    print(f"| {r['name']} | {r['args']['load']} | {l['goodput']:.0f} | {l['p50_ms']:.0f} | {l['p99_ms']:.0f} | "
          f"{100*rej/sent:.1f} % | {l['gave_up']} | {lims} | {(r.get('upstream') or {}).get('max_in_flight')} |")
