import sys,math
def load(f):
    d={}
    for l in open(f):
        r=l.split(); d[int(r[0])]=(float(r[1]), 99.0 if r[2]=="never" else float(r[2]), 99.0 if r[3]=="never" else float(r[3]))
    return d
a=load(sys.argv[1]); b=load(sys.argv[2])
lo=int(sys.argv[3]) if len(sys.argv)>3 else 1; hi=int(sys.argv[4]) if len(sys.argv)>4 else 10**9
ks=sorted(k for k in a if k in b and lo<=k<=hi)
for i,name in enumerate(["goodput","fall","return"]):
    d=[b[k][i]-a[k][i] for k in ks]; n=len(d); m=sum(d)/n
    se=math.sqrt(sum((x-m)**2 for x in d)/(n-1)/n) if n>1 else 0
    print(f"{name}: n={n} mean diff {m:+.4f} ± {se:.4f}  moved={sum(abs(x)>1e-9 for x in d)} up={sum(x>1e-9 for x in d)}")
print("falls>5:", sum(a[k][1]>5 for k in ks), "->", sum(b[k][1]>5 for k in ks), " returns>5:", sum(a[k][2]>5 for k in ks), "->", sum(b[k][2]>5 for k in ks))
