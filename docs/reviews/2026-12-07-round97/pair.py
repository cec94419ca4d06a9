import sys, math
a, b = sys.argv[1], sys.argv[2]
def load(p):
    return {int(l.split()[0]): float(l.split()[1]) for l in open(p) if l.strip()}
A, B = load(a), load(b)
ks = sorted(set(A) & set(B))
d = [B[k]-A[k] for k in ks]
m = sum(d)/len(d); sd = math.sqrt(sum((x-m)**2 for x in d)/(len(d)-1)) if len(d)>1 else 0
print(f"n={len(d)} mean {m:+.4f} ± {sd/math.sqrt(len(d)):.4f}  up {sum(x>0 for x in d)} down {sum(x<0 for x in d)}")
for lo in range(min(ks), max(ks)+1, 5):
    s=[k for k in ks if lo<=k<lo+5]
    if s: print(f"  {lo}-{lo+4}: {sum(A[k] for k in s)/len(s):.4f} -> {sum(B[k] for k in s)/len(s):.4f}", " ".join(f"{k}:{d2:+.3f}" for k in s for d2 in [B[k]-A[k]] if abs(d2)>0.0005))
