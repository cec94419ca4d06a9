#!/bin/bash
# H: second runs of the smaller findings
cd "$(dirname "$0")"
one() { n=$1; shift; python3 run2.py $n "$@" > results/$n.out 2>&1; head -1 results/$n.out | cut -c1-200; sed -n 2,3p results/$n.out; }
U='python3 pyup2.py --port {port} --workers 20 --latency 10ms --slow-path /slow --slow-latency 500ms'
for i in 2; do
  one H-routes-f600-s40-adaptive-$i --route /fast --route /slow --upstream "$U" --pool adaptive \
    --load "/fast|--rate 600 --duration 20s --patience 2s" --load "/slow|--rate 40 --duration 20s --patience 2s"
  sed -n 2p results/H-routes-f600-s40-adaptive-$i.out | cut -c1-200
done
U='python3 pyup2.py --port {port} --workers 20 --latency 10ms --body-bytes 65536 --body-ms 200'
one H-stream-r76-adaptive-2 --upstream "$U" --pool adaptive --load "--rate 76 --duration 20s --patience 3s"
U='python3 pyup2.py --port {port} --workers 20 --latency 210ms'
one H-fixed210-r76-adaptive --upstream "$U" --pool adaptive --load "--rate 76 --duration 20s --patience 3s"
echo batchH done
