import sys
for f in sys.argv[1:]:
    d=[l.split() for l in open(f)]; d={int(w[0]):(float(w[1]),float(w[2]),float(w[3])) for w in d}
    out=[]
    for s0 in range(1,int(__import__("os").environ.get("TO","30"))+1,5):
        v=[d[s] for s in range(s0,s0+5) if s in d]
        if not v: continue
        g=sum(x[0] for x in v)/len(v); f20=max(x[1] for x in v); f50=max(x[2] for x in v)
        ok = g>=0.95 and f20<=5 and f50<=5
        out.append(f"{s0}-{s0+4}: {g:.4f} {f20}/{f50}{' MET' if ok else ''}")
    print(f, ' | '.join(out))
