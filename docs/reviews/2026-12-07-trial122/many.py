#!/usr/bin/env python3
"""Writes many.toml: 2000 pools, each with a route on its own host (h0.example .. h1999.example),
all in front of one upstream (`sluicegate upstream --listen 127.0.0.1:22112 --latency 0ms`)."""
out = ['listen = "127.0.0.1:22280"', 'workers = 1', '[admin]', 'listen = "127.0.0.1:22290"']
N = 2000
for i in range(N):
    out += ['[[pools]]', f'name = "p{i}"', 'upstream = "http://127.0.0.1:22112"', 'max_concurrency = 64']
for i in range(N):
    out += ['[[routes]]', f'pool = "p{i}"', f'host = "h{i}.example"']
open('many.toml', 'w').write('\n'.join(out) + '\n')
