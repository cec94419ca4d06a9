#!/usr/bin/env python3
"""Requests spaced around the upstream's silent idle close (1 s): a POST with a body, a POST
without one, a GET, each after a pause of 0.97–1.03 s on one upstream connection. Counts the
answers by status. idle_race.py PORT ROUNDS"""
import http.client, random, sys, time, collections
port, rounds = int(sys.argv[1]), int(sys.argv[2])
res = collections.Counter()
for i in range(rounds):
    kind = ("post-body", "post-empty", "get")[i % 3]
    time.sleep(random.uniform(0.97, 1.03))
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    if kind == "post-body":
        c.request("POST", "/echo", body=b"x" * 100)
    elif kind == "post-empty":
        c.request("POST", "/x", body=b"")
    else:
        c.request("GET", "/x")
    r = c.getresponse(); r.read()
    res[(kind, r.status, r.getheader("x-sluicegate-reason"))] += 1
    c.close()
for k, v in sorted(res.items(), key=str): print(k, v)
