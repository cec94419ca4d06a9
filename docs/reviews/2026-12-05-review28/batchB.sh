#!/bin/bash
# B: heavy-tailed and two-speed services at 0.5x, 0.8x, 2x their capacity
#  lognormal sigma 1, median 20 ms (mean 33 ms), 10 workers: capacity 303/s
#  bimodal 90 % 10 ms / 10 % 500 ms (mean 59 ms), 20 workers: capacity 339/s
cd "$(dirname "$0")"
run() { # name upstream rates static
  local nm=$1 U=$2 rates=$3 st=$4
  for r in $rates; do
    for p in adaptive static:$st none; do
      n=B-$nm-r$r-${p/:/}
      python3 run2.py $n --upstream "$U" --pool $p --load "--rate $r --duration 20s --patience 2s" > results/$n.out 2>&1
      head -1 results/$n.out | cut -c1-200; sed -n 3p results/$n.out
    done
  done
}
run logn "python3 pyup2.py --port {port} --workers 10 --latency 20ms --dist lognormal:1" "150 240 600" 10
run bim "python3 pyup2.py --port {port} --workers 20 --latency 10ms --dist bimodal:0.1:500ms" "170 270 680" 20
echo batchB done
