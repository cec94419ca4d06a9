#!/usr/bin/env bash
# loss.sh TAG FIRST LAST: where demo_busy_2x loses against 19.0 answers a 0.1 s (fixed 14)
tag=$1; f=$2; l=$3
for s in $(seq $f $l); do paste -d, tl/${tag}tr-$s.csv tl/$tag-$s.csv; done | awk -F, '$1=="littles" && $2!="t_s" {g=$30; c=$19; L=$3; if(c=="probe") k="probe"; else if(c=="probe_ended") k="probe_tail"; else if($4=="warming_up"||$4=="starting") k="start"; else if (L>14) k="steady>14"; else if (L<13) k="steady<13"; else k="steady13-14"; n[k]++; loss[k]+=19.0-g; N++; G+=g} END{for(k in n) printf "%-12s frac %.3f mean_good %.2f loss/total %.4f\n", k, n[k]/N, 19-loss[k]/n[k], loss[k]/N/20; printf "all good %.3f\n", G/N/20}' | sort
