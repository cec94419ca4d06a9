import csv, sys, subprocess, os
U = 43.3
def q99(v):
    v = sorted(v); n = len(v)
    return v[max(0, -(-99 * n // 100) - 1)] if v else float('nan')
def load(seed, binpath, out, env=None):
    d = f"{out}/s{seed}"
    e = dict(os.environ, DIAG_OUT=f"{d}.csv", **(env or {}))
    subprocess.run([binpath, "scorecard", "--scenario", sys.argv[1], "--algo", "littles", "--seed", str(seed), "--trace", "--out", d, "-q"], env=e, stdout=subprocess.DEVNULL, check=True)
    rows = []
    for line in list(open(f"{d}.csv"))[1:]:
        f = line.strip().split(",")
        a, q, s, e_ = (int(x) / 1000 for x in f[:4])
        rows.append(dict(a=a, lw=q - a, uw=s - q, sv=e_ - s, lat=e_ - a, ok="Ok" in f[4], lim=int(f[6]), out=int(f[7])))
    tr = list(csv.DictReader(open(f"{d}/trace_{sys.argv[1]}.csv")))
    return [r for r in rows if r["ok"]], tr
binp = sys.argv[2]; out = sys.argv[3]; seeds = [int(x) for x in sys.argv[4].split(",")]
U = float(sys.argv[5]) if len(sys.argv) > 5 else 43.3
print("seed  p99r   noUW   noStart(<1s) noProbe(lim<c) noExcur(lim>c+1) | tail: lw uw sv | tail share start/probe/excur/setpt")
c = 20
for s in seeds:
    served, tr = load(s, binp, out)
    lat = [r["lat"] for r in served]
    p = q99(lat)
    f = lambda pred: q99([r["lat"] for r in served if not pred(r)]) / U
    tail = [r for r in served if r["lat"] >= p]
    m = lambda k: sum(r[k] for r in tail) / len(tail)
    st = sum(r["a"] < 1000 for r in tail); pr = sum(r["a"] >= 1000 and r["lim"] < c for r in tail)
    ex = sum(r["a"] >= 1000 and r["lim"] > c + 1 for r in tail); sp = len(tail) - st - pr - ex
    print(f"{s:4} {p/U:.3f} {q99([r['lat']-r['uw'] for r in served])/U:.3f}  {f(lambda r: r['a']<1000):.3f}       {f(lambda r: r['lim']<c):.3f}          {f(lambda r: r['lim']>c+1):.3f}      | {m('lw'):.1f} {m('uw'):.2f} {m('sv'):.1f} | {st}/{pr}/{ex}/{sp}")
