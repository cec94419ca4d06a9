#!/usr/bin/env python3
# cmp.py A B: paired goodput (B - A) +- s.e. per scenario, /tmp/sp80/scr/{A,B}-SC.txt
import sys, glob, math, os, re
a, b = sys.argv[1], sys.argv[2]
def conv(c):
    xs = re.findall(r'([0-9.]+) s|never', c)
    if 'never' in c: return None
    v = [float(x) for x in re.findall(r'([0-9.]+) s', c)]
    return max(v) if v else -1
def load(p):
    d = {}
    for line in open(p):
        f = line.split(None, 2)
        if len(f) < 2: continue
        rest = f[2] if len(f) > 2 else ''
        c, p99 = (rest.split('|') + [''])[:2]
        d[int(f[0])] = (float(f[1]), conv(c), p99.strip())
    return d
for pa in sorted(glob.glob(f'/tmp/sp80/scr/{a}-*.txt')):
    sc = os.path.basename(pa)[len(a)+1:-4]
    pb = f'/tmp/sp80/scr/{b}-{sc}.txt'
    if not os.path.exists(pb): continue
    A, B = load(pa), load(pb)
    seeds = sorted(set(A) & set(B))
    if not seeds: continue
    d = [B[s][0] - A[s][0] for s in seeds]
    n = len(d); m = sum(d)/n
    se = math.sqrt(sum((x-m)**2 for x in d)/(n-1)/n) if n > 1 else 0
    moved = sum(1 for x in d if abs(x) > 1e-9)
    up = sum(1 for x in d if x > 1e-9)
    pair = [(A[s][1], B[s][1]) for s in seeds if A[s][1] is not None and B[s][1] is not None and A[s][1] >= 0]
    cd = [y - x for x, y in pair]
    cm = sum(cd)/len(cd) if cd else 0
    cse = math.sqrt(sum((x-cm)**2 for x in cd)/(len(cd)-1)/len(cd)) if len(cd) > 1 else 0
    o5a = sum(1 for s in seeds if A[s][1] is None or A[s][1] > 5); o5b = sum(1 for s in seeds if B[s][1] is None or B[s][1] > 5)
    print(f'{sc:22s} {seeds[0]}-{seeds[-1]} n={n}: goodput {sum(A[s][0] for s in seeds)/n:.4f} -> {sum(B[s][0] for s in seeds)/n:.4f}, {m:+.4f} +- {se:.4f} ({moved} move, {up} up); worst conv {cm:+.2f} +- {cse:.2f} s; >5 s or never {o5a} -> {o5b}')
