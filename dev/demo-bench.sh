#!/usr/bin/env bash
# `fleetd demo` at a metro's size (issue 35), release build, in one process: CPU and resident
# memory each minute, the demo's own line, fleetd's ride counters and dispatch rounds (p50/p99
# bucket bounds from its histogram), and how long it takes to stop after SIGTERM.
#   dev/demo-bench.sh [OSM=../shared/data/cities/adelaide.osm.pbf] [VEHICLES=10000] [RATE=500] [MINUTES=5]
set -euo pipefail
cd "$(dirname "$0")/.."
OSM=$(readlink -f "${1:-../shared/data/cities/adelaide.osm.pbf}")
VEHICLES="${2:-10000}"; RATE="${3:-500}"; MINUTES="${4:-5}"
GRPC_PORT=50191; HTTP_PORT=18191

swift build -c release --product fleetd
BIN="$(swift build -c release --show-bin-path)"
WORK=$(mktemp -d)
PID=
trap 'kill $PID 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"' EXIT

"$BIN/fleetd" demo --osm "$OSM" --vehicles "$VEHICLES" --riders-per-minute "$RATE" --speedup 1 \
  --data-dir "$WORK/data" --grpc-port $GRPC_PORT --http-port $HTTP_PORT >"$WORK/demo.out" 2>&1 &
PID=$!
STARTED=$SECONDS
until curl -sf "http://127.0.0.1:$HTTP_PORT/healthz" >/dev/null; do
  kill -0 $PID 2>/dev/null || { cat "$WORK/demo.out"; exit 1; }
  sleep 0.5
done
echo "fleetd demo, $(basename "$OSM"), $VEHICLES vehicles, $RATE riders a minute: ready after $((SECONDS - STARTED)) s"
ticks() { awk '{print $14 + $15}' /proc/$PID/stat; }
HZ=$(getconf CLK_TCK)
previous=$(ticks)
for minute in $(seq "$MINUTES"); do
  sleep 60
  now=$(ticks)
  rss=$(awk '/VmRSS/ {print int($2 / 1024)}' /proc/$PID/status)
  cores=$(python3 -c "print(f'{($now - $previous) / $HZ / 60:.2f}')")
  echo "minute $minute: $cores cores, resident $rss MB | $(grep 'rides:' "$WORK/demo.out" | tail -n 1)"
  previous=$now
done
curl -sf "http://127.0.0.1:$HTTP_PORT/metrics" >"$WORK/metrics.txt"
python3 - "$WORK/metrics.txt" <<'PY'
import re, sys
buckets, count, counters = [], 0.0, []
for line in open(sys.argv[1]):
    m = re.match(r'fleetd_dispatch_round_duration_seconds_bucket\{le="([^"]+)"\} (\S+)', line)
    if m:
        buckets.append((float("inf") if m[1] == "+Inf" else float(m[1]), float(m[2])))
    elif line.startswith("fleetd_dispatch_round_duration_seconds_count"):
        count = float(line.split()[1])
    elif re.match(r"fleetd_(rides_(requested|completed|no_vehicle_found)_total|dispatch_waiting_rides) ", line):
        counters.append(line.strip())
buckets.sort()
bounds = [next(le for le, n in buckets if n >= q * count) for q in (0.5, 0.99)] if count else ["-", "-"]
print(" | ".join(counters))
print(f"dispatch rounds: {int(count)}, p50 <= {bounds[0]} s, p99 <= {bounds[1]} s")
PY
started=$(date +%s.%N)
kill -TERM $PID
wait $PID || true
PID=
echo "stopped $(python3 -c "print(f'{$(date +%s.%N) - $started:.2f}')") s after SIGTERM"
