import sys, math
a={l.split()[0]:l.split() for l in open(sys.argv[1]) if len(l.split())>=4}
b={l.split()[0]:l.split() for l in open(sys.argv[2]) if len(l.split())>=4}
ks=[k for k in a if k in b]
for col,name in ((1,'goodput'),(2,'rejected'),(3,'p99/unl')):
    d=[float(b[k][col])-float(a[k][col]) for k in ks]
    if len(d)<2: continue
    m=sum(d)/len(d); sd=math.sqrt(sum((x-m)**2 for x in d)/(len(d)-1))
    ma=sum(float(a[k][col]) for k in ks)/len(ks); mb=sum(float(b[k][col]) for k in ks)/len(ks)
    print(f"{name}: n={len(d)} A {ma:.4f} B {mb:.4f} diff {m:+.4f} ± {sd/math.sqrt(len(d)):.4f}; up {sum(x>0 for x in d)} down {sum(x<0 for x in d)}")
