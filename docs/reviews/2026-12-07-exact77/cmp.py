import sys,math
a={l.split()[0]:l.split() for l in open(sys.argv[1])}; b={l.split()[0]:l.split() for l in open(sys.argv[2])}
for col,name in ((1,'goodput'),(2,'p99/unl'),(3,'converge')):
    d=[];na=nb=0
    for s in a:
        x,y=a[s][col],b[s][col]
        if x=='' or y=='' : 
            continue
        d.append(float(y)-float(x))
    if not d: continue
    m=sum(d)/len(d); se=math.sqrt(sum((v-m)**2 for v in d)/(len(d)-1)/len(d)) if len(d)>1 else 0
    ma=sum(float(a[s][col]) for s in a if a[s][col]!='' and b[s][col]!='')/len(d)
    print(f"{name}: A {ma:.4f} B-A {m:+.4f} ± {se:.4f} (n={len(d)})")
