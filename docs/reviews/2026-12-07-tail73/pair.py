import sys, math
def load(p): return {int(l.split(',')[0]): [float(x) for x in l.strip().split(',')[1:]] for l in open(p)}
a, b = load(sys.argv[1]), load(sys.argv[2])
ks = sorted(set(a) & set(b))
for i, name in ((0, 'goodput'), (1, 'p99r')):
    d = [b[k][i] - a[k][i] for k in ks]
    m = sum(d) / len(d); sd = math.sqrt(sum((x - m) ** 2 for x in d) / (len(d) - 1)) if len(d) > 1 else 0
    ma = sum(a[k][i] for k in ks) / len(ks); mb = sum(b[k][i] for k in ks) / len(ks)
    print(f"{name}: {ma:.4f} -> {mb:.4f}  diff {m:+.4f} ± {sd/math.sqrt(len(d)):.4f} (n={len(d)}, moved {sum(x != 0 for x in d)})")
if len(sys.argv) > 3:
    for k in ks: print(k, a[k], b[k])
