#!/usr/bin/env bash
# QuoteRide under load on the Monaco graph (release builds): a fresh fleetd with its dispatcher,
# the sample tariffs and Monaco zones (data/tariffs.json, data/monaco-zones.geojson, for the
# provider 'bench'), VEHICLES online vehicles all reporting every 5 s, and QuoteRide at RATE
# quotes/s, open loop; then SearchVehicles by pickup ETA and GetVehicle at the same rate, the
# same run's floor. Prints the latency table, and fleetd's CPU time and memory. Then the area
# index in process: point-in-polygon over 10,000 polygons against checking each in turn.
#   dev/quote-bench.sh [VEHICLES=1000] [RATE=200] [SECONDS=20]
set -euo pipefail
cd "$(dirname "$0")/.."
VEHICLES="${1:-1000}"; RATE="${2:-200}"; SECONDS_MEASURED="${3:-20}"
PBF=$(readlink -f data/monaco.osm.pbf)

swift build -c release --product fleetd
(cd Benchmarks && swift build -c release --product dispatch-bench)
FLEETD="$(swift build -c release --show-bin-path)/fleetd"
BIN="$(cd Benchmarks && swift build -c release --show-bin-path)"

WORK=$(mktemp -d)
PID=
trap 'kill $PID 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"' EXIT
"$FLEETD" graph build --osm "$PBF" --out "$WORK/monaco.graph" >/dev/null
sed 's/"demo"/"bench"/' data/tariffs.json > "$WORK/tariffs.json"
sed 's/"provider": *"demo"/"provider": "bench"/g' data/monaco-zones.geojson > "$WORK/zones.geojson"
mkdir -p "$WORK/data"
"$FLEETD" keys add --data-dir "$WORK/data" --provider bench --role server --out "$WORK/server.json" >/dev/null
"$FLEETD" serve --data-dir "$WORK/data" --graph "$WORK/monaco.graph" --grpc-port 50172 --http-port 18172 \
  --dispatch --tariffs "$WORK/tariffs.json" --service-areas "$WORK/zones.geojson" --log-level warning &
PID=$!
for _ in $(seq 200); do curl -sf http://127.0.0.1:18172/healthz >/dev/null && break; sleep 0.1; done

echo "fleetd $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(nproc) cores, Monaco graph, SQLite (WAL, synchronous=FULL), --dispatch, sample tariffs and zones"
echo
"$BIN/dispatch-bench" quote --grpc-port 50172 --key "$WORK/server.json" --graph "$WORK/monaco.graph" \
  --vehicles "$VEHICLES" --rate "$RATE" --duration "$SECONDS_MEASURED"
echo "fleetd CPU time over the run: $(ps -o cputime= -p $PID); resident memory: $(( $(ps -o rss= -p $PID) / 1024 )) MiB"
kill $PID; wait $PID 2>/dev/null || true; PID=
echo
echo "== the area index, in process on one core"
"$BIN/dispatch-bench" areas
