import sys,collections,re
# stdin: DBG94S/N lines of one run; output: over, under_in_probe, under_out, under with base<10
ev=[]; probe=False
lines=sys.stdin.read().split('\n')
for l in lines:
    if l.startswith('DBG94S'):
        probe='probe=true' in l
    elif l.startswith('DBG94N'):
        p=l.split(); ev.append((float(p[1][2:]),int(p[4]),int(p[5].split('=')[1]),probe))
o=up=uo=0.0; tot=0
for (t0,L,B,pr),(t1,*_) in zip(ev,ev[1:]+[(300.0,0,0,0)]):
    if t1<=20: continue
    d=min(t1,300)-max(t0,20); tot+=d
    if L>10: o+=(L-10)*d
    if L<10:
        if L<B: up+=(10-L)*d
        else: uo+=(10-L)*d
print(sys.argv[1], '%.3f %.3f %.3f'%(o/tot,up/tot,uo/tot))
