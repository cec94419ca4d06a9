#!/usr/bin/env bash
# summ.sh TAG: distribution of the max limit in the first 5 s
f=/work/r93/leap-$1.txt
awk '{m=$2; b=(m<=22)?"<=22":(m<=30)?"23-30":(m<=45)?"31-45":(m<=60)?"46-60":"61-80"; c[b]++; a14+=$3; a20+=$4; g+=$5; n++} END{printf "%s n=%d  max<=22:%d 23-30:%d 31-45:%d 46-60:%d 61-80:%d  mean s>14 %.2f s>20 %.3f goodput %.4f\n", FILENAME, n, c["<=22"], c["23-30"], c["31-45"], c["46-60"], c["61-80"], a14/n, a20/n, g/n}' $f
