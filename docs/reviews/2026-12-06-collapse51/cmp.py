"""Two per-seed lists (seed, goodput, convergence after 20 s, after 50 s) compared: cmp.py A B."""
import sys
def load(f):
    d={}
    for l in open(f):
        w=l.split(); d[int(w[0])]=(float(w[1]),float(w[2]),float(w[3]))
    return d
a=load(sys.argv[1]); b=load(sys.argv[2])
for s in sorted(a):
    if abs(a[s][0]-b[s][0])>0.0005 or abs(a[s][1]-b[s][1])>0.05: print(s, a[s], '->', b[s])
import statistics as st
print('mean goodput', round(st.mean(v[0] for v in a.values()),4), '->', round(st.mean(v[0] for v in b.values()),4))
print('worst conv@20', max(v[1] for v in a.values()), '->', max(v[1] for v in b.values()), ' worst conv@50', max(v[2] for v in a.values()), '->', max(v[2] for v in b.values()))
print('min goodput', min(v[0] for v in a.values()), '->', min(v[0] for v in b.values()))
