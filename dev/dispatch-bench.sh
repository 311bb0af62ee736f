#!/usr/bin/env bash
# Dispatch benchmarks on the Monaco graph (release builds):
#   1. SearchVehicles against a fresh fleetd with VEHICLES online vehicles while REPORTING of
#      them report their position every 5 s: calls/s and latency per order_by (count 10,
#      radius 3 km) at RATE searches/s, open loop, next to GetVehicle at the same rate (the
#      floor of one gRPC call on this machine, in the same run);
#      The same searches in process on one core, for what each costs fleetd itself.
#   2. dispatch quality: a simulated hour of Poisson demand at three loads (40, 70, 95 % of the
#      fleet busy), the same requests served by the batched and the greedy dispatcher.
#   dev/dispatch-bench.sh [VEHICLES=5000] [REPORTING=2000] [RATE=200] [SECONDS=20]
set -euo pipefail
cd "$(dirname "$0")/.."
VEHICLES="${1:-5000}"; REPORTING="${2:-2000}"; RATE="${3:-200}"; SECONDS_MEASURED="${4:-20}"
PBF=$(readlink -f data/monaco.osm.pbf)

swift build -c release --product fleetd
(cd Benchmarks && swift build -c release --product dispatch-bench)
FLEETD="$(swift build -c release --show-bin-path)/fleetd"
BIN="$(cd Benchmarks && swift build -c release --show-bin-path)"

WORK=$(mktemp -d)
PID=
trap 'kill $PID 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"' EXIT
"$FLEETD" graph build --osm "$PBF" --out "$WORK/monaco.graph" >/dev/null
mkdir -p "$WORK/data"
"$FLEETD" keys add --data-dir "$WORK/data" --provider bench --role server --out "$WORK/server.json" >/dev/null
"$FLEETD" serve --data-dir "$WORK/data" --graph "$WORK/monaco.graph" --grpc-port 50171 --http-port 18171 \
  --log-level warning &
PID=$!
for _ in $(seq 200); do curl -sf http://127.0.0.1:18171/healthz >/dev/null && break; sleep 0.1; done

echo "fleetd $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(nproc) cores, Monaco graph, SQLite (WAL, synchronous=FULL)"
echo
echo "== 1. SearchVehicles: $VEHICLES online vehicles, $REPORTING reporting"
"$BIN/dispatch-bench" search --grpc-port 50171 --key "$WORK/server.json" --graph "$WORK/monaco.graph" \
  --vehicles "$VEHICLES" --reporting "$REPORTING" --rate "$RATE" --duration "$SECONDS_MEASURED"
echo "fleetd CPU time over the run: $(ps -o cputime= -p $PID)"
kill $PID; wait $PID 2>/dev/null || true; PID=
echo
echo "== 1b. the same searches in process, one at a time on one core (no transport, no other load)"
"$BIN/dispatch-bench" search-cpu --graph "$WORK/monaco.graph" --vehicles "$VEHICLES"
echo
echo "== 2. dispatch quality: batched against greedy"
"$BIN/dispatch-bench" quality --graph "$WORK/monaco.graph"
