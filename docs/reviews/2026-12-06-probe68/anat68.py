"""Probe anatomy: per probe, cause, depth/base, held, and goodput lost in its slots.
Usage: python3 anat68.py SCENARIO SEEDS(a-b) [ENV=VAL ...] [--v]
"""
import csv, sys, subprocess, collections, re, os
S = os.environ.get('SIM', '/work/tgt-probe68/release/sluicegate-sim')
sc = sys.argv[1]; a, b = (int(x) for x in sys.argv[2].split('-'))
env = dict(os.environ); env['SG_P68DBG'] = '1'
verbose = '--v' in sys.argv
for kv in sys.argv[3:]:
    if '=' in kv:
        k, v = kv.split('=', 1); env[k] = v
tag = '_'.join(x for x in sys.argv[3:] if '=' in x) or 'main'
agg = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])  # cause: n, held s, loss hold, loss after
tot_loss = []; gps = []
for seed in range(a, b + 1):
    out = f'/tmp/p68/runs/{tag}-{sc}-{seed}'
    os.makedirs(out, exist_ok=True)
    r = subprocess.run([S, 'scorecard', '--scenario', sc, '--algo', 'littles', '--algo', 'fixed_c',
                        '--seed', str(seed), '--trace', '--out', out, '-q'], env=env,
                       capture_output=True, text=True)
    lines = [l for l in r.stderr.splitlines() if l.startswith('P68')]
    sc_rows = list(csv.DictReader(open(f'{out}/scorecard.csv')))
    gp = {x['algorithm']: float(x['goodput_per_possible']) for x in sc_rows}
    gps.append((gp['littles'], gp['fixed_c']))
    tl = list(csv.DictReader(open(f'{out}/timeline_{sc}.csv')))
    ours = [x for x in tl if x['algorithm'] == 'littles']
    orc = [x for x in tl if x['algorithm'] == 'fixed_c']
    orc_tot = sum(int(x['good']) for x in orc)
    good = {round(float(x['t_s']), 1): int(x['good']) for x in ours}
    # probes
    probes = []
    cur = None
    for l in lines:
        kv = dict(re.findall(r'(\w+)=(\S+)', l))
        if l.startswith('P68 start'):
            cur = dict(t=float(kv['t']), cause=kv['cause'], depth=int(kv['depth']), base=int(kv['base']),
                       counted=kv['counted'])
            probes.append(cur)
        elif l.startswith('P68 finish') and cur is not None:
            cur['held'] = float(kv['held']); cur['after'] = float(kv['done_after'])
            cur['fin'] = float(kv['t']); cur['drained'] = kv['drained']; cur['decided'] = kv['decided']
        elif l.startswith('P68 after') and cur is not None:
            cur['confirmed'] = kv['confirmed']
    # reference: mean good/slot over slots not in any probe (hold..done+0.3) and t>=2
    inprobe = set()
    for p in probes:
        end = p.get('fin', p['t'] + p.get('held', 0.5) * 2) + 0.3
        t = p['t']
        while t < end:
            inprobe.add(round(t, 1)); t += 0.1
    ref = [g for t, g in good.items() if t >= 2 and round(t, 1) not in inprobe]
    R = sum(ref) / max(1, len(ref))
    loss_all = 0.0
    for p in probes:
        hold_end = p['t'] + p.get('held', 0.5)
        end = p.get('fin', hold_end) + 0.3
        lh = la = 0.0
        for t, g in good.items():
            if p['t'] <= t < hold_end: lh += R - g
            elif hold_end <= t < end: la += R - g
        lh /= orc_tot; la /= orc_tot
        p['lh'] = lh; p['la'] = la
        c = p['cause']
        agg[c][0] += 1; agg[c][1] += p.get('held', 0); agg[c][2] += lh; agg[c][3] += la
        if verbose:
            print(f"  s{seed} t={p['t']:.2f} {c:9s} d={p['depth']}/{p['base']} cnt={p['counted'][:9]} held={p.get('held',-1):.2f} after={p.get('after',-1):.2f} dr={p.get('drained')} dec={p.get('decided')} conf={p.get('confirmed')} loss={lh:.4f}+{la:.4f}")
    tot_loss.append(sum(p['lh'] + p['la'] for p in probes))
    if verbose:
        print(f"seed {seed}: ours {gp['littles']:.3f} oracle {gp['fixed_c']:.3f} probes {len(probes)} loss {tot_loss[-1]:.4f} R={R:.1f}")
n = b - a + 1
print(f"{sc} {tag} seeds {a}-{b}: ours {sum(g[0] for g in gps)/n:.4f} oracle {sum(g[1] for g in gps)/n:.4f}  probe loss/seed {sum(tot_loss)/n:.4f}")
for c, (k, h, lh, la) in sorted(agg.items()):
    print(f"   {c:9s} n/seed={k/n:5.2f} held/seed={h/n:6.2f}s loss hold={lh/n:.4f} after={la/n:.4f}")
