#!/usr/bin/env python3
"""How the queue estimate's low quantile reads a queue of k requests in front of c busy workers.

A request that finds k requests waiting ahead of it (FIFO, every worker busy) waits for k
completions among c workers: Gamma(k, 1/X) with X = c / S the pass rate, then is served
(exponential, mean S). The estimate reads (Q05(RT) - Q05(unqueued RT)) * X; the median reads
(median(RT) - median(unqueued RT)) * X. Printed: each as a share of k.

    python3 low_quantile_bias.py        (pure Python, about 20 s)
"""
import random

random.seed(1)
N = 100_000


def quantile(v, p):
    v = sorted(v)
    return v[int(p * len(v))]


for c, s in [(5, 0.5), (10, 0.05), (20, 0.05), (50, 0.05), (500, 0.05)]:
    x = c / s
    service = [random.expovariate(1 / s) for _ in range(N)]
    low0, mid0 = quantile(service, 0.05), quantile(service, 0.5)
    cells = []
    for k in [1, 2, 3, 5, 10]:
        rt = [sum(random.expovariate(x) for _ in range(k)) + t for t in service]
        low = (quantile(rt, 0.05) - low0) * x / k
        mid = (quantile(rt, 0.5) - mid0) * x / k
        cells.append(f"k={k}: low {low:.2f} mid {mid:.2f}")
    print(f"c={c:<3} S={s}s: " + " | ".join(cells))
