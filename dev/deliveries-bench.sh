#!/usr/bin/env bash
# The Deliveries API under load (issue 36), on a release fleetd with Monaco's road graph and a fresh
# SQLite data directory (WAL, synchronous=FULL), the generator on the same machine:
#  1. durable acknowledged writes, closed loop, over grpc-swift's client: UpdateVehicle (the rides'
#     vehicle update, the peer), UpdateDeliveryVehicle(last_location) and UpdateTask(attributes);
#  2. GetTaskTrackingInfo latency under load: recipients polling their parcels while every van
#     reports its position in a closed loop (each report re-estimates its stops on the roads).
# Each run prints acknowledged calls/s, latency percentiles and fleetd's CPU per call.
#   dev/deliveries-bench.sh [VEHICLES] [SECONDS] [CONNECTIONS] [TRACKERS]
set -euo pipefail
cd "$(dirname "$0")/.."
VEHICLES="${1:-100}"; SECONDS_MEASURED="${2:-20}"; CONNECTIONS="${3:-4}"; TRACKERS="${4:-20}"; WARMUP=3

swift build -c release --product fleetd
(cd Benchmarks && swift build -c release --product fleet-load)
FLEETD="$(swift build -c release --show-bin-path)/fleetd"
LOAD="$(cd Benchmarks && swift build -c release --show-bin-path)/fleet-load"

DATA=$(mktemp -d /tmp/fleetd-deliveries-bench.XXXXXX)
PID=; BACKGROUND=
trap 'kill $PID $BACKGROUND 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$DATA"' EXIT
TICK=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# measure fleet-load-arguments…: one run, with fleetd's CPU over the measured seconds.
measure() {
  (sleep "$WARMUP"; ticks "$PID" > "$DATA/t0"; sleep "$SECONDS_MEASURED"; ticks "$PID" > "$DATA/t1") &
  local sampler=$!
  local out
  out=$("$LOAD" --key "$DATA/server.json" --grpc-port 50161 --vehicles "$VEHICLES" --duration "$SECONDS_MEASURED" \
    --warmup "$WARMUP" --connections "$CONNECTIONS" --client grpc "$@")
  wait $sampler
  echo "$out"
  local acknowledged
  acknowledged=$(sed -n 's/^acknowledged updates: \([0-9]*\).*/\1/p' <<<"$out")
  awk -v t0="$(cat "$DATA/t0")" -v t1="$(cat "$DATA/t1")" -v hz="$TICK" -v n="$acknowledged" 'BEGIN {
    cpu = (t1 - t0) / hz
    printf "server CPU: %.1f s over the measured seconds, %.0f µs per acknowledged call\n", cpu, (n > 0 ? cpu * 1e6 / n : 0) }'
  echo
}

"$FLEETD" graph build --osm data/monaco.osm.pbf --out "$DATA/monaco.graph" >/dev/null
"$FLEETD" keys add --data-dir "$DATA/data" --provider bench --role server --out "$DATA/server.json" >/dev/null
"$FLEETD" serve --data-dir "$DATA/data" --graph "$DATA/monaco.graph" --grpc-port 50161 --http-port 18161 \
  --log-level warning &
PID=$!
for _ in $(seq 300); do curl -sf http://127.0.0.1:18161/healthz >/dev/null && break; sleep 0.1; done
echo "fleetd $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(nproc) cores, Monaco's roads, SQLite in $DATA"
echo
echo "== 1. Durable acknowledged writes, $VEHICLES closed-loop callers"
for RPC in update delivery-update task-update; do measure --rpc "$RPC"; done

echo "== 2. GetTaskTrackingInfo: $TRACKERS recipients polling while $VEHICLES vans report in a closed loop"
"$LOAD" --key "$DATA/server.json" --grpc-port 50161 --vehicles "$VEHICLES" --connections "$CONNECTIONS" \
  --rpc delivery-update --duration $((SECONDS_MEASURED + 2 * WARMUP + 5)) --warmup 0 > "$DATA/background.txt" &
BACKGROUND=$!
sleep 2
measure --rpc tracking --workers "$TRACKERS"
wait $BACKGROUND; BACKGROUND=
echo "the vans' reports meanwhile:"; cat "$DATA/background.txt"
echo
echo "== 3. GetTaskTrackingInfo alone (the same $TRACKERS recipients, nothing else running)"
measure --rpc tracking --workers "$TRACKERS"
