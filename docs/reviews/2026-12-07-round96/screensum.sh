#!/usr/bin/env bash
# screensum.sh: every scenario screened on 31-90, main's code (M) against the kept (K)
pair="$(cd "$(dirname "$0")/../../.." && pwd)/scripts/sim-pair"
cd /work/r96
for f in per/K-*-31.txt; do sc=${f#per/K-}; sc=${sc%-31.txt}; [ -s per/M-$sc-31.txt ] || continue
  [ $(wc -l < $f) -eq 60 ] || continue
  if cmp -s per/M-$sc-31.txt $f; then echo "$sc: identical seed by seed"; continue; fi
  echo -n "$sc: "; "$pair" per/M-$sc-31.txt $f | awk 'NR==1{printf "%s  ", $0} NR>1 {for(i=3;i<=NF;i++) if ($i ~ /^[0-9]+:[+-]/) printf "%s ", $i} END{print ""}'
  paste -d' ' per/M-$sc-31.txt $f | awk '$3!=$6 {printf "    p99 seed %s %s -> %s ms\n", $1, $3, $6}' | head -5
done
