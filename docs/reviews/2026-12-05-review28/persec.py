#!/usr/bin/env python3
"""persec.py NAME: per-second limit, in flight, and the gate's refusals and forwards from /status samples."""
import json, sys
r = json.load(open(f"results/{sys.argv[1]}.json"))
prev = None
for s in r["samples"]:
    c = s.get("c")
    if c is None:
        print(s["t"], "-", s.get("nopool") and "no pool" or s.get("err")); continue
    ref = sum(v for k, v in c.items() if k in ("queue_full", "queue_timeout", "predicted_timeout", "closed", "upstream_unreachable", "upstream_error", "upstream_timeout"))
    fw = c.get("forwarded", 0)
    if prev:
        print(f'{s["t"]:6.1f} limit {s["limit"]:>5} inflight {s["in_flight"]:>4} queued {s["queued"]:>4} fwd/s {fw-prev[0]:>5} refused/s {ref-prev[1]:>5}')
    prev = (fw, ref)
for e in r.get("events", []): print("event", e)
