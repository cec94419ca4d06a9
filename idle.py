import sys,csv
tot=[]
for d in sys.argv[1:]:
    rows=list(csv.DictReader(open(f'{d}/timeline_heavy_tail_3x.csv')))
    tot.append(sum(max(0,50-int(r['upstream'])) for r in rows)/len(rows))
print('idle', ' '.join(f'{x:.2f}' for x in tot), f'mean {sum(tot)/len(tot):.3f}')
