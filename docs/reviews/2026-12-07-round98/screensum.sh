#!/usr/bin/env bash
# screensum.sh A B FIRST: paired goodput A -> B per scenario (scripts/sim-pair), identical ones counted
a=$1; b=$2; f=$3; same=0
for fa in per/$a-*-$f.txt; do
  sc=${fa#per/$a-}; sc=${sc%-$f.txt}; fb=per/$b-$sc-$f.txt
  [ -s "$fb" ] || continue
  if cmp -s <(cut -d' ' -f1,2 $fa) <(cut -d' ' -f1,2 $fb); then same=$((same+1)); continue; fi
  printf "%-24s %s\n" $sc "$(/work/wt/round98/scripts/sim-pair $fa $fb | head -1)"
done
echo "identical seed by seed: $same"
