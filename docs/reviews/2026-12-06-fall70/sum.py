import sys
def fl(x): return 99.0 if x=="never" else float(x)
for f in sys.argv[1:]:
    rows=[l.split() for l in open(f)]
    g=[float(r[1]) for r in rows]; fall=[fl(r[2]) for r in rows]; ret=[fl(r[3]) for r in rows]
    fc=[int(r[4]) for r in rows]; tc=[int(r[5]) for r in rows]
    print(f"{f}: n={len(rows)} goodput={sum(g)/len(g):.4f} falls>5={sum(x>5 for x in fall)} returns>5={sum(x>5 for x in ret)} false_cb={sum(fc)} in {sum(x>0 for x in fc)} seeds, true_cb={sum(tc)} seeds_without_true={sum(x==0 for x in tc)} worstfall={max(fall)} worstret={max(ret)}")
    print("  falls>5:", [(r[0],r[2]) for r in rows if fl(r[2])>5], " returns>5:", [(r[0],r[3]) for r in rows if fl(r[3])>5])
