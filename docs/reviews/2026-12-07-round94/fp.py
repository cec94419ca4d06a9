import sys
probe=False; start=None; res=None; t=0
for l in sys.stdin:
    if l.startswith('DBG94S'):
        t=float(l.split()[1][2:])
    elif l.startswith('DBG94N'):
        p=l.split(); L=int(p[4]); B=int(p[5].split('=')[1])
        if L<B and start is None and t>5: start=(t,L,B)
        elif L>=B and start is not None:
            res=(start[0],t-start[0],start[1],start[2]); break
print(sys.argv[1], *(res if res else ('-',)))
