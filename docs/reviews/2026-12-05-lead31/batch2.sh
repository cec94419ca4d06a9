set -x
for v in old new2; do
SGBIN=/tmp/sluicegate-$v python3 run2.py slow15-$v --upstream "python3 pyup2.py --port {port} --latency 50ms --dist exp --workers 20 --fail 0.003:0.05 --change 10s:latency=150ms --change 25s:latency=50ms" --pool adaptive --extra 'upstream_timeout = "300ms"' --load "--rate 600 --duration 40s --patience 2s"
done
SGBIN=/tmp/sluicegate-new2 python3 run2.py slow15-static20 --upstream "python3 pyup2.py --port {port} --latency 50ms --dist exp --workers 20 --fail 0.003:0.05 --change 10s:latency=150ms --change 25s:latency=50ms" --pool static:20 --extra 'upstream_timeout = "300ms"' --load "--rate 600 --duration 40s --patience 2s"
