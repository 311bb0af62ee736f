#!/usr/bin/env bash
# Load benchmark, everything on this machine (the generator shares the cores with the server):
#  1. a release fleetd on a fresh SQLite data directory, and fleet-load sending
#     UpdateVehicle(last_location) over gRPC from N concurrent simulated vehicles; the same from
#     grpc-swift's client; GetVehicle as the read-only baseline;
#  2. fleetd with the Monaco road graph and the N vehicles on trips (trip progress on): unary
#     UpdateVehicle next to location reports over fleetkit.v1.VehicleUpdates streams (one
#     report per message, as drivers' apps send them, and up to 64 per message, as gateways
#     relay them) and over the REST batch (100 reports per request);
#  3. the unary load against grpc-floor (grpc-swift 2 answering without doing anything): the
#     ceiling of the gRPC stack itself on this machine, which the stream is measured against.
# Each run prints acknowledged durable updates/s, latency from send to acknowledgement, and
# fleetd's CPU time per acknowledged update over the measured seconds.
#   dev/bench.sh [VEHICLES] [SECONDS] [CONNECTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
VEHICLES="${1:-100}"; SECONDS_MEASURED="${2:-20}"; CONNECTIONS="${3:-4}"; WARMUP=3

swift build -c release --product fleetd
(cd Benchmarks && swift build -c release --product fleet-load && swift build -c release --product grpc-floor)
FLEETD="$(swift build -c release --show-bin-path)/fleetd"
LOAD="$(cd Benchmarks && swift build -c release --show-bin-path)/fleet-load"
FLOOR="$(cd Benchmarks && swift build -c release --show-bin-path)/grpc-floor"

DATA=$(mktemp -d /tmp/fleetd-bench.XXXXXX)
PID=; FLOOR_PID=
trap 'kill $PID $FLOOR_PID 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$DATA"' EXIT
TICK=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
declare -A THROUGHPUT

# measure NAME PID fleet-load-arguments…: one run, with the server's CPU over the measured seconds.
measure() {
  local name=$1 pid=$2; shift 2
  (sleep "$WARMUP"; ticks "$pid" > "$DATA/t0"; sleep "$SECONDS_MEASURED"; ticks "$pid" > "$DATA/t1") &
  local sampler=$!
  local out
  out=$("$LOAD" --key "$DATA/server.json" --vehicles "$VEHICLES" --duration "$SECONDS_MEASURED" --warmup "$WARMUP" \
    --connections "$CONNECTIONS" "$@")
  wait $sampler
  echo "$out"
  local acknowledged
  acknowledged=$(sed -n 's/^acknowledged updates: \([0-9]*\).*/\1/p' <<<"$out")
  THROUGHPUT[$name]=$(sed -n 's/^throughput: \([0-9]*\).*/\1/p' <<<"$out")
  awk -v t0="$(cat "$DATA/t0")" -v t1="$(cat "$DATA/t1")" -v hz="$TICK" -v n="$acknowledged" 'BEGIN {
    cpu = (t1 - t0) / hz
    printf "server CPU: %.1f s over the measured seconds, %.0f µs per acknowledged update\n", cpu, (n > 0 ? cpu * 1e6 / n : 0) }'
  echo
}

start_fleetd() { # DATA-DIR PORT-OFFSET extra arguments…
  local dir=$1 offset=$2; shift 2
  "$FLEETD" serve --data-dir "$dir" --grpc-port $((50151 + offset)) --http-port $((18151 + offset)) \
    --log-level warning "$@" &
  PID=$!
  for _ in $(seq 300); do curl -sf "http://127.0.0.1:$((18151 + offset))/healthz" >/dev/null && break; sleep 0.1; done
}

"$FLEETD" keys add --data-dir "$DATA/plain" --provider bench --role server --out "$DATA/server.json" >/dev/null
echo "fleetd $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(nproc) cores, SQLite (WAL, synchronous=FULL) in $DATA"
echo
echo "== 1. UpdateVehicle without a road graph"
start_fleetd "$DATA/plain" 0
# update/raw: the lean HTTP/2 client leaves the cores to fleetd; update/grpc: grpc-swift's client.
for RUN in update/raw update/grpc get/raw; do
  measure "$RUN" $PID --grpc-port 50151 --rpc "${RUN%/*}" --client "${RUN#*/}"
done
kill $PID; wait $PID 2>/dev/null || true

echo "== 2. $VEHICLES vehicles on trips over Monaco roads (trip progress on): unary, stream, REST batch"
"$FLEETD" graph build --osm data/monaco.osm.pbf --out "$DATA/monaco.graph" >/dev/null
"$FLEETD" keys add --data-dir "$DATA/trips" --provider bench --role server --out "$DATA/server.json" >/dev/null
start_fleetd "$DATA/trips" 2 --graph "$DATA/monaco.graph"
TRIPS=(--grpc-port 50153 --http-port 18153 --requests data/monaco.requests)
measure trips/update $PID "${TRIPS[@]}" --rpc update --client raw
measure trips/stream-1 $PID "${TRIPS[@]}" --rpc stream --batch 1
measure trips/stream-64 $PID "${TRIPS[@]}" --rpc stream --batch 64
measure trips/batch-100 $PID "${TRIPS[@]}" --rpc batch --batch 100
kill $PID; wait $PID 2>/dev/null || true; PID=

echo "== 3. grpc-floor: the same unary load against grpc-swift 2 doing nothing (no auth, domain or storage)"
"$FLOOR" --grpc-port 50152 &
FLOOR_PID=$!
sleep 1
measure floor $FLOOR_PID --grpc-port 50152 --rpc update --client raw

echo "== Against the do-nothing unary floor (${THROUGHPUT[floor]} calls/s)"
for RUN in update/raw trips/update trips/stream-1 trips/stream-64 trips/batch-100; do
  awk -v name="$RUN" -v x="${THROUGHPUT[$RUN]}" -v floor="${THROUGHPUT[floor]}" \
    'BEGIN { printf "%-18s %7d updates/s  %.2f× the floor\n", name, x, (floor > 0 ? x / floor : 0) }'
done
