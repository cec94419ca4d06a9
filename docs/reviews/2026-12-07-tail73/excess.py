# Excess tail mass by time window: ours vs a fixed limit, same seeds. Counts served requests with
# latency > 2 x unloaded p99 (86.8 ms) per 0.5 s of arrival, summed over seeds.
import os, subprocess, sys
B = "/work/tgt-tail73diag/release/sluicegate-sim"
U2 = 2 * 43.41
def run(seed, algo, env):
    p = f"/tmp/t73/ex/{algo}{env.get('FIXPLUS','')}{env.get('T73','')}_{seed}"
    e = dict(os.environ, DIAG_OUT=p + ".csv", **env)
    subprocess.run([B, "scorecard", "--scenario", "threaded_overload", "--algo", algo, "--seed", str(seed), "--out", p, "-q"], env=e, stdout=subprocess.DEVNULL, check=True)
    out = []
    for line in list(open(p + ".csv"))[1:]:
        f = line.strip().split(",")
        a, q, s, e_ = (int(x) / 1000 for x in f[:4])
        if "Ok" in f[4]: out.append((a, e_ - a, s - q))
    return out
os.makedirs("/tmp/t73/ex", exist_ok=True)
seeds = [int(x) for x in sys.argv[1].split(",")]
W = [0.0, 0.2, 0.5, 1.0, 4.9, 5.6, 6.5, 10.0]
res = {}
for name, algo, env in (("ours", "littles", {}), ("fix21", "fixed_c", {"FIXPLUS": "1"}), ("fix20", "fixed_c", {"FIXPLUS": "0"})):
    over = [0] * (len(W) - 1); tot = [0] * (len(W) - 1); uw = [0.0] * (len(W) - 1)
    for s in seeds:
        for a, lat, u in run(s, algo, env):
            t = a / 1000
            for i in range(len(W) - 1):
                if W[i] <= t < W[i + 1]:
                    tot[i] += 1; over[i] += lat > U2; uw[i] += u
    res[name] = (over, tot, uw)
    print(f"{name:6}", " ".join(f"[{W[i]:.1f},{W[i+1]:.1f}) {over[i]:5d}/{tot[i]:6d}={over[i]/tot[i]*100:.2f}% uw{uw[i]/tot[i]:.2f}" for i in range(len(W) - 1)), f" all {sum(over)/sum(tot)*100:.3f}%")
