#!/usr/bin/env python3
# cmp.py A B: paired goodput (B - A) +- s.e. per scenario file pair /tmp/fall78/{A,B}-SC.txt
import sys, glob, math, os
a, b = sys.argv[1], sys.argv[2]
def load(p):
    d = {}
    for line in open(p):
        f = line.split()
        if len(f) < 2: continue
        conv = line.split(None, 2)[2].strip() if len(f) > 2 else ''
        first = conv.split('/')[0].strip().split()[0] if conv else 'never'
        d[int(f[0])] = (float(f[1]), None if first in ('never', '-') else float(first))
    return d
for pa in sorted(glob.glob(f'/tmp/fall78/{a}-*.txt')):
    sc = os.path.basename(pa)[len(a)+1:-4]
    pb = f'/tmp/fall78/{b}-{sc}.txt'
    if not os.path.exists(pb): continue
    A, B = load(pa), load(pb)
    seeds = sorted(set(A) & set(B))
    if not seeds: continue
    d = [B[s][0] - A[s][0] for s in seeds]
    n = len(d); m = sum(d)/n
    se = math.sqrt(sum((x-m)**2 for x in d)/(n-1)/n) if n > 1 else 0
    moved = sum(1 for x in d if abs(x) > 1e-9)
    ca = [A[s][1] for s in seeds]; cb = [B[s][1] for s in seeds]
    pair = [(x, y) for x, y in zip(ca, cb) if x is not None and y is not None]
    cd = [y - x for x, y in pair]
    cm = sum(cd)/len(cd) if cd else 0
    cse = math.sqrt(sum((x-cm)**2 for x in cd)/(len(cd)-1)/len(cd)) if len(cd) > 1 else 0
    over5a = sum(1 for x in ca if x is None or x > 5); over5b = sum(1 for x in cb if x is None or x > 5)
    print(f'{sc:22s} seeds {seeds[0]}-{seeds[-1]} (n={n}): goodput {sum(A[s][0] for s in seeds)/n:.4f} -> {sum(B[s][0] for s in seeds)/n:.4f}, diff {m:+.4f} +- {se:.4f} ({moved} seeds move); first convergence diff {cm:+.2f} +- {cse:.2f} s; over 5 s or never {over5a} -> {over5b}')
