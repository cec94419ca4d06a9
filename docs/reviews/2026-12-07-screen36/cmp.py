import sys, csv, math, glob, os
def load(d):
    r = {}
    for f in glob.glob(f"{d}/s*.csv"):
        s = int(os.path.basename(f)[1:-4])
        for row in csv.DictReader(open(f)):
            r[(row['scenario'], s)] = row
    return r
a, b = load(sys.argv[1]), load(sys.argv[2])
keys = sorted(set(a) & set(b))
scen = sorted({k[0] for k in keys})
cols = ['goodput_per_possible', 'p99_per_unloaded', 'rejected', 'converge_s']
print(f"seeds: {len({k[1] for k in keys})}")
print("| scenario | metric | A | B | B − A ± s.e. | moved |")
print("|---|---|---|---|---|---|")
for sc in scen:
    ss = [k[1] for k in keys if k[0] == sc]
    for c in cols:
        va, vb = [], []
        nev = [0, 0]
        for s in ss:
            x, y = a[(sc, s)][c], b[(sc, s)][c]
            if x == '' or y == '':
                continue
            if 'never' in (x, y):
                nev[0] += x == 'never'; nev[1] += y == 'never'
                continue
            va.append(float(x)); vb.append(float(y))
        if nev != [0, 0]:
            print(f"| {sc} | {c} never | {nev[0]} | {nev[1]} | | |")
        if len(va) < 2: continue
        d = [y - x for x, y in zip(va, vb)]
        m = sum(d) / len(d); sd = math.sqrt(sum((x - m) ** 2 for x in d) / (len(d) - 1))
        se = sd / math.sqrt(len(d)); moved = sum(abs(x) > 1e-9 for x in d)
        big = {'goodput_per_possible': 0.002, 'p99_per_unloaded': 0.02, 'rejected': 0.001, 'converge_s': 0.2}[c]
        if moved and (abs(m) >= big or (se > 0 and abs(m) > 2 * se)):
            print(f"| {sc} | {c} | {sum(va)/len(va):.4f} | {sum(vb)/len(vb):.4f} | {m:+.4f} ± {se:.4f} | {moved}/{len(d)} |")
