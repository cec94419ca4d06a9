import sys, math
for f in sys.argv[1:]:
    rows=[l.split() for l in open(f) if len(l.split())==5]
    for col,name in ((1,'goodput'),(2,'rejected')):
        d=[float(r[col+2])-float(r[col]) for r in rows]
        m=sum(d)/len(d); sd=math.sqrt(sum((x-m)**2 for x in d)/(len(d)-1))
        a=sum(float(r[col]) for r in rows)/len(rows); b=sum(float(r[col+2]) for r in rows)/len(rows)
        print(f"{f.split('/')[-1]} {name}: n={len(d)} ref {a:.4f} new {b:.4f} diff {m:+.4f} ± {sd/math.sqrt(len(d)):.4f}; up {sum(x>0 for x in d)} down {sum(x<0 for x in d)}")
