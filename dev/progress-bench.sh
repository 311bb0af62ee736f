#!/usr/bin/env bash
# Live trip progress benchmarks on the Monaco graph, each on a fresh release fleetd:
#   1. ingest: N vehicles on trips over real roads sending UpdateVehicle(last_location) as fast
#      as acknowledged, with road snapping, routes, ETAs and traffic computed on every update;
#   2. push: WatchTrip streams (1,000 and 10,000) while drivers report at a steady rate: the
#      latency from UpdateVehicle to a watcher holding the new trip;
#   3. traffic: ETAs with learned traffic against free-flow ETAs on a congested scenario.
#   dev/progress-bench.sh [VEHICLES=2000] [SECONDS=20]
set -euo pipefail
cd "$(dirname "$0")/.."
VEHICLES="${1:-2000}"; SECONDS_MEASURED="${2:-20}"
PBF=$(readlink -f data/monaco.osm.pbf)
REQUESTS=$(readlink -f data/monaco.requests)

swift build -c release --product fleetd
(cd Benchmarks && swift build -c release --product fleet-load && swift build -c release --product progress-bench)
FLEETD="$(swift build -c release --show-bin-path)/fleetd"
BIN="$(cd Benchmarks && swift build -c release --show-bin-path)"

WORK=$(mktemp -d /tmp/progress-bench.XXXXXX)
PID=
trap 'kill $PID 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"' EXIT
"$FLEETD" graph build --osm "$PBF" --out "$WORK/monaco.graph" >/dev/null

# Starts a fresh fleetd (new data directory) with the graph.
serve() {
  kill $PID 2>/dev/null || true; wait 2>/dev/null || true
  rm -rf "$WORK/data"; mkdir -p "$WORK/data"
  "$FLEETD" keys add --data-dir "$WORK/data" --provider bench --role server --out "$WORK/server.json" >/dev/null
  "$FLEETD" serve --data-dir "$WORK/data" --graph "$WORK/monaco.graph" --grpc-port 50161 --http-port 18161 \
    --log-level warning &
  PID=$!
  for _ in $(seq 200); do curl -sf http://127.0.0.1:18161/healthz >/dev/null && return; sleep 0.1; done
  echo "fleetd did not start" >&2; exit 1
}

echo "fleetd $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(nproc) cores, Monaco graph, SQLite (WAL, synchronous=FULL)"
echo
echo "== 1. ingest with progress: $VEHICLES vehicles on trips"
serve
before=$(ps -o cputime= -p $PID)
"$BIN/fleet-load" --grpc-port 50161 --key "$WORK/server.json" --requests "$REQUESTS" --vehicles "$VEHICLES" \
  --duration "$SECONDS_MEASURED" --connections 4
echo "fleetd CPU time: $before -> $(ps -o cputime= -p $PID)"
for WATCHERS in 1000 10000; do
  echo
  echo "== 2. push: $WATCHERS watchers"
  serve
  "$BIN/fleet-load" --grpc-port 50161 --key "$WORK/server.json" --requests "$REQUESTS" --vehicles 1000 \
    --watchers "$WATCHERS" --rate 200 --duration "$SECONDS_MEASURED" --connections 4
done
kill $PID; wait $PID 2>/dev/null || true; PID=
echo
echo "== 3. traffic: learned against free-flow ETAs"
"$BIN/progress-bench" --osm "$PBF" --requests "$REQUESTS"
