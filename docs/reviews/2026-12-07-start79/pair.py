#!/usr/bin/env python3
"""Paired differences (B - A) per scenario of screen.sh CSVs: goodput and p99/unloaded (columns 3 and 8)."""
import sys, math, collections
def load(p):
    d = {}
    for line in open(p):
        f = line.strip().split(',')
        seed, sc = int(f[0]), f[1]
        d[(sc, seed)] = (float(f[3]), float(f[8]))
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
by = collections.defaultdict(list)
for k in a:
    if k in b:
        by[k[0]].append((k[1], a[k], b[k]))
for sc, rows in by.items():
    n = len(rows)
    for i, name in ((0, 'goodput'), (1, 'p99x')):
        ds = [r[2][i] - r[1][i] for r in rows]
        m = sum(ds) / n
        se = math.sqrt(sum((x - m) ** 2 for x in ds) / (n - 1) / n) if n > 1 else 0
        ma = sum(r[1][i] for r in rows) / n; mb = sum(r[2][i] for r in rows) / n
        moved = sum(1 for x in ds if abs(x) > 1e-9)
        print(f"{sc:24s} {name:8s} n={n} A={ma:.4f} B={mb:.4f} d={m:+.4f} ± {se:.4f} moved={moved}")
    big = sorted(rows, key=lambda r: -abs(r[2][1] - r[1][1]))[:5]
    print("   largest p99 moves:", [(r[0], r[1][1], r[2][1]) for r in big if abs(r[2][1]-r[1][1])>1e-9])
