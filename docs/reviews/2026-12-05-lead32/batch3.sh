set -x
UP="python3 pyup2.py --port {port} --latency 50ms --dist exp --workers 20 --fail 0.003:0.05 --change 10s:latency=150ms --change 25s:latency=50ms"
for round in 1 2; do
for v in s32 c32; do
SGBIN=/tmp/sluicegate-$v python3 run2.py slow32c-$v-$round --upstream "$UP" --pool adaptive --extra 'upstream_timeout = "300ms"' --load "--rate 600 --duration 40s --patience 2s"
done
SGBIN=/tmp/sluicegate-c32 python3 run2.py slow32c-static20-$round --upstream "$UP" --pool static:20 --extra 'upstream_timeout = "300ms"' --load "--rate 600 --duration 40s --patience 2s"
done
