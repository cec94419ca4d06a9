"""Where ours loses goodput in the demo rows, per 100 ms slot, and a per-second timeline.

Usage (from a directory of runs, one seed each):
  sluicegate-sim scorecard --scenario SC --algo littles --seed S --trace --out PFX-SC-S -q
  sluicegate-sim scorecard --scenario SC --algo fixed_c --seed S --out orc-SC-S -q
  python3 anatomy.py PFX SC SEEDS [--timeline] [--ref R]
The reference rate of a slot is the oracle's mean over the run (same seed), or R answers a
100 ms slot (`demo_busy_2x`: the best fixed limit, 14, gives 0.950 of 200 a second = 19.0).
Every slot of the first 15 s is filed:
  start   until the phase is first `steady` (the start, its probe and the regrowth after it)
  probe   a probe (phase `probing`) after the start, and the 0.3 s after it (its regrowth)
  below   the steady state at a limit under the workers (10): idle workers
  at      the steady state at 10-11 permits
  above   the steady state at 12 or more: a queue inside, slowed by contention
The loss of a slot is the reference less its good answers, as a share of the run's capacity
(3000 answers). Late answers (served past the deadline) and queue time-outs are counted too.
"""
import csv, sys, collections

pfx, sc, seeds = sys.argv[1], sys.argv[2], sys.argv[3]
a, b = (int(x) for x in seeds.split('-'))
show = '--timeline' in sys.argv
ref_fixed = float(sys.argv[sys.argv.index('--ref') + 1]) if '--ref' in sys.argv else None
W = 10
CAP = 3000.0
tot = collections.defaultdict(float)
mod_idle = collections.defaultdict(float)
mod_cont = collections.defaultdict(float)
cnt = collections.defaultdict(int)
summary = []
for seed in range(a, b + 1):
    tl = list(csv.DictReader(open(f'{pfx}-{sc}-{seed}/timeline_{sc}.csv')))
    tr = list(csv.DictReader(open(f'{pfx}-{sc}-{seed}/trace_{sc}.csv')))
    if ref_fixed is None:
        orc = list(csv.DictReader(open(f'orc-{sc}-{seed}/timeline_{sc}.csv')))
        R = sum(int(r['good']) for r in orc if float(r['t_s']) < 15) / 150
    else:
        R = ref_fixed
    started = False
    probe_end = -1.0
    per = collections.defaultdict(float)
    late = tos = 0
    rows = []
    for x, y in zip(tl, tr):
        t = float(x['t_s'])
        if t >= 14.95:
            break
        g = int(x['good']); L = int(x['limit']); ph = y['phase']
        late += int(x['late']); tos += int(x['queue_timeouts'])
        if ph == 'steady':
            started = True
        if not started:
            c = 'a_start'
        elif ph == 'probing':
            c = 'b_probe'; probe_end = t
        elif t - probe_end <= 0.3 + 1e-9:
            c = 'b_probe'
        elif L < W:
            c = 'c_below'
        elif L <= W + 1:
            c = 'at'
        else:
            c = 'e_above'
        loss = (R - g) / CAP
        per[c] += loss; tot[c] += loss; cnt[c] += 1
        # The model: a worker idles for each request short of the workers at the upstream, and
        # each request waiting past the first slows every service that starts by 5 %.
        u = int(x['upstream'])
        idle = max(0, W - u) / W
        slow = 1.0 + 0.5 * max(0, u - W - 1) / W
        mod_idle[c] += idle * 20 / CAP; mod_cont[c] += (1 - 1 / slow) * (1 - idle) * 20 / CAP
        rows.append((t, L, int(x['in_flight']), int(x['upstream']), g, int(x['rejected']),
                     int(x['queue_timeouts']), int(x['late']), ph, y['queue'], y['floor_rt_ms'],
                     y['min_rt_ms'], y['last_cause'], y['last_from'], y['last_to']))
    good = sum(r[4] for r in rows) / CAP
    summary.append((seed, good, per, late, tos))
    if show:
        print(f'--- {sc} seed {seed}: goodput {good:.3f}, ref {R*150/CAP:.3f}, late {late}, '
              f'queue time-outs {tos}')
        print(' s  limit(min-max) in_flight upstream good rej q_out late  phases  queue  floor '
              'min_rt  moves')
        for s in range(15):
            sec = [r for r in rows if s <= r[0] < s + 1 - 1e-9]
            if not sec:
                continue
            lims = [r[1] for r in sec]
            phases = ''.join(sorted({r[8][0] for r in sec}))
            qs = [float(r[9]) for r in sec if r[9]]
            moves = []
            prev = None
            for r in sec:
                key = (r[12], r[13], r[14])
                if r[12] and key != prev and (prev is not None or s == 0 or True):
                    if not moves or moves[-1] != f'{r[13]}>{r[14]} {r[12]}':
                        moves.append(f'{r[13]}>{r[14]} {r[12]}')
                prev = key
            print(f'{s:2d} {sum(lims)/len(lims):5.1f}({min(lims)}-{max(lims)}) '
                  f'{sum(r[2] for r in sec)/len(sec):5.1f} {sum(r[3] for r in sec)/len(sec):6.1f} '
                  f'{sum(r[4] for r in sec):4d} {sum(r[5] for r in sec):4d} {sum(r[6] for r in sec):4d} '
                  f'{sum(r[7] for r in sec):3d}  {phases:5s} '
                  f'{(sum(qs)/len(qs) if qs else float("nan")):5.2f} {sec[-1][10]:>6s} {sec[-1][11]:>7s}  '
                  + '; '.join(dict.fromkeys(moves)))
n = b - a + 1
print(f'{sc} seeds {seeds}: loss by part (share of capacity, mean a seed; slots a seed)')
for c in sorted(tot):
    print(f'  {c:8s} {tot[c]/n:+.4f}  ({cnt[c]/n:5.1f} slots)   model: idle {mod_idle[c]/n:.4f} contention {mod_cont[c]/n:.4f}')
print(f'  all      {sum(tot.values())/n:+.4f}             model: idle {sum(mod_idle.values())/n:.4f} contention {sum(mod_cont.values())/n:.4f}')
print('  per seed: ' + ' '.join(f'{s}:{g:.3f}[' + ','.join(f'{k[0]}{v:+.3f}' for k, v in sorted(p.items())) + f',late{lt},qto{q}]'
      for s, g, p, lt, q in summary))
