#!/usr/bin/env bash
# summ.sh FILE...: starts past 22/45/68 in the first 5 s, mean s above 20, goodput
for f in "$@"; do
awk '{m=$2; if(m>22)a++; if(m>45)b++; if(m>=68)c++; s20+=$4; g+=$5; n++} END{printf "%-40s n=%d  >22:%d >45:%d >=68:%d  s>20 %.3f goodput %.4f\n", FILENAME, n, a, b, c, s20/n, g/n}' $f
done
