#!/usr/bin/env bash
# run.sh BIN LABEL [seeds_from seeds_to] [env...] : per-seed goodput and p99 ratio for pools 25/30/40 and threaded_overload
bin=$1; label=$2; a=${3:-1}; b=${4:-30}; shift 4 2>/dev/null
out=/tmp/s56/$label; mkdir -p $out
for sc in pool25 pool30 pool40 threaded_overload; do
  for s in $(seq $a $b); do
    if [[ $sc == threaded_overload ]]; then args=(--scenario threaded_overload); else args=(--scenarios docs/reviews/2026-12-06-start56/$sc.toml); fi
    env "$@" $bin scorecard "${args[@]}" --algo littles --seed $s --seeds 1 --out $out/$sc-$s -q >/dev/null 2>&1
    tail -1 $out/$sc-$s/scorecard.csv | awk -F, -v s=$s -v sc=$sc '{print sc, s, $3, $8}'
  done
done > $out/per-seed.txt
awk '{g[$1]+=$3; p[$1]+=$4; n[$1]++} END {for (k in g) printf "%s n=%d goodput %.4f p99 %.4f\n", k, n[k], g[k]/n[k], p[k]/n[k]}' $out/per-seed.txt | sort
