# One seed of capacity_fifth, every 100 ms: limit, in flight, upstream, good | the trace columns.
# Usage: python3 show.py DIR SEED FROM TO
import csv,sys
def show(d,seed,a,b):
    tr={r['t_s']:r for r in csv.DictReader(open(f'{d}/t{seed}/trace_capacity_fifth.csv')) if r['algorithm']=='littles'}
    tl={r['t_s']:r for r in csv.DictReader(open(f'{d}/t{seed}/timeline_capacity_fifth.csv')) if r['algorithm']=='littles'}
    print('seed',seed)
    for t,r in tl.items():
        if a<=float(t)<b:
            x=tr.get(t,{})
            print(t,r['limit'],r['in_flight'],r['upstream'],r['good'],'|',x.get('phase'),x.get('cap'),x.get('cap_source'),x.get('knee'),x.get('min_rt_ms'),x.get('floor_rt_ms'),x.get('queue'),x.get('pass_rate'),x.get('capacity'),x.get('at_limit'),x.get('last_from'),x.get('last_to'),x.get('last_cause'))
show(sys.argv[1],int(sys.argv[2]),float(sys.argv[3]),float(sys.argv[4]))
