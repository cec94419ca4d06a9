import csv,sys,collections,subprocess,os
import os
S=os.environ.get('SIM','/work/tgt-few39/release/sluicegate-sim')
scen=sys.argv[1]; c=int(sys.argv[2]); seeds=range(int(sys.argv[3]),int(sys.argv[4]))
tag=sys.argv[5] if len(sys.argv)>5 else 'x'
tot=collections.Counter(); totgood=collections.Counter(); start=0
for s in seeds:
    out=f'/tmp/f39/d_{tag}_{scen}_{s}'
    if not os.path.exists(out+'/timeline_'+scen+'.csv'):
        subprocess.run([S,'scorecard','--scenario',scen,'--algo','littles','--seed',str(s),'--out',out,'-q'],capture_output=True)
    rows=[r for r in csv.DictReader(open(out+'/timeline_'+scen+'.csv')) if r['algorithm']=='littles']
    cnt=collections.Counter(); good=collections.Counter()
    for r in rows:
        L=int(float(r['limit'])); d=L-c
        k='start' if float(r['t_s'])<10 else ('<=-2' if d<=-2 else {-1:'-1',0:'0',1:'+1',2:'+2'}.get(d,'>=+3'))
        cnt[k]+=1; good[k]+=float(r['good'])
    tot.update(cnt); totgood.update(good)
keys=['start','<=-2','-1','0','+1','+2','>=+3']
T=sum(tot.values())
print('share of time  ', ' '.join(f'{k}:{tot[k]/T:.3f}' for k in keys))
print('good per 0.1s  ', ' '.join(f'{k}:{(totgood[k]/tot[k] if tot[k] else 0):.2f}' for k in keys))
