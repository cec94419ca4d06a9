import csv, sys, statistics as st
U = float(sys.argv[2]) if len(sys.argv) > 2 else 43.3  # unloaded p99, ms
rows = []
for line in list(open(sys.argv[1]))[1:]:
    f = line.strip().split(",")
    a, q, s, e = (int(x) / 1000 for x in f[:4])
    rows.append(dict(a=a, lw=q - a, uw=s - q, sv=e - s, lat=e - a, fate=f[4] + f[5], lim=int(f[6]), out=int(f[7])))
served = [r for r in rows if "Ok" in r["fate"]]
lat = sorted(r["lat"] for r in served)
n = len(lat)
p99 = lat[max(0, -(-99 * n // 100) - 1)]
print(f"served {n}  p99 {p99:.1f} ms  ratio {p99 / U:.3f}")
tail = [r for r in served if r["lat"] >= p99]
def m(xs): return sum(xs) / len(xs) if xs else float("nan")
for name, grp in (("all", served), ("tail", tail)):
    print(f"{name:5} n={len(grp):5} lim_wait {m([r['lw'] for r in grp]):6.1f} up_wait {m([r['uw'] for r in grp]):5.2f} service {m([r['sv'] for r in grp]):5.1f} lat {m([r['lat'] for r in grp]):6.1f}  up_wait>0 {m([r['uw'] > 0.01 for r in grp]):.3f}")
# time buckets of 0.5s: tail count
buckets = {}
for r in tail:
    b = int(r["a"] // 500)
    buckets[b] = buckets.get(b, 0) + 1
allb = {}
for r in served:
    b = int(r["a"] // 500); allb[b] = allb.get(b, 0) + 1
print("tail per 0.5s:", " ".join(f"{b/2:.1f}:{buckets.get(b,0)}/{allb[b]}" for b in sorted(allb)))
# excess over limit: requests that saw more in flight than 20 workers
print("tail with up_wait>1ms:", sum(r['uw'] > 1 for r in tail), "of", len(tail))
print("tail lw dist: <20", sum(r['lw'] < 20 for r in tail), "20-40", sum(20 <= r['lw'] < 40 for r in tail), ">=40", sum(r['lw'] >= 40 for r in tail))
print("all  lw quantiles:", [round(sorted(r['lw'] for r in served)[int(q * n)], 1) for q in (0.1, 0.25, 0.5, 0.75, 0.9, 0.99)])
print("tail lim at acquire dist:", sorted({r['lim'] for r in tail}))
