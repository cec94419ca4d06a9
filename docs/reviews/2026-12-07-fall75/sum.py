import sys
def fl(x): return 99.0 if x=="never" else float(x)
for f in sys.argv[1:]:
    rows=[l.split() for l in open(f)]
    g=[float(r[1]) for r in rows]; fall=[fl(r[2]) for r in rows]; ret=[fl(r[3]) for r in rows]
    print(f"{f}: n={len(rows)} goodput={sum(g)/len(g):.4f} falls>5={sum(x>5 for x in fall)} returns>5={sum(x>5 for x in ret)} meanfall={sum(fall)/len(fall):.2f} meanret={sum(ret)/len(ret):.2f} worstfall={max(fall)} worstret={max(ret)}")
    print("  falls>5:", [(r[0],r[2]) for r in rows if fl(r[2])>5], " returns>5:", [(r[0],r[3]) for r in rows if fl(r[3])>5])
