#!/usr/bin/env bash
# Routing benchmark against OSRM, on the same extract, in one run:
#   dev/routing-bench.sh [PBF=data/monaco.osm.pbf] [REQUESTS=data/monaco.requests]
# Builds release binaries; builds the graph with FleetKit and with osrm-extract + osrm-contract
# (wall time and peak memory of each); serves both on loopback; then routing-bench replays the
# route queries against both (agreement, in-process and HTTP latency, 100x100 matrices).
set -euo pipefail
cd "$(dirname "$0")/.."
PBF=$(readlink -f "${1:-data/monaco.osm.pbf}")
REQUESTS=$(readlink -f "${2:-data/monaco.requests}")
command -v /usr/bin/time >/dev/null || { echo "needs GNU time: apt-get install time" >&2; exit 1; }

swift build -c release --product fleetd
(cd Benchmarks && swift build -c release --product routing-bench)
FLEETD="$(swift build -c release --show-bin-path)/fleetd"
BENCH="$(cd Benchmarks && swift build -c release --show-bin-path)/routing-bench"
OSRM_BIN=$(dev/osrm.sh bin)

WORK=$(mktemp -d /tmp/routing-bench.XXXXXX)
PIDS=()
trap 'kill ${PIDS[@]+"${PIDS[@]}"} 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"' EXIT

echo "== graph build: $(basename "$PBF") ($(du -k "$PBF" | cut -f1) KiB)"
/usr/bin/time -o "$WORK/fleetkit.time" -f "%e %M" "$FLEETD" graph build --osm "$PBF" --out "$WORK/fleet.graph" >/dev/null
cp "$PBF" "$WORK/osrm.osm.pbf"
/usr/bin/time -o "$WORK/extract.time" -f "%e %M" "$OSRM_BIN/osrm-extract" -p "$OSRM_BIN/../share/profiles/car.lua" \
  "$WORK/osrm.osm.pbf" >"$WORK/extract.log" 2>&1
/usr/bin/time -o "$WORK/contract.time" -f "%e %M" "$OSRM_BIN/osrm-contract" "$WORK/osrm.osrm" >"$WORK/contract.log" 2>&1
read -r fk_s fk_kb <"$WORK/fleetkit.time"
read -r ex_s ex_kb <"$WORK/extract.time"
read -r co_s co_kb <"$WORK/contract.time"
echo "FleetKit fleetd graph build: ${fk_s} s, peak ${fk_kb} KiB (the CCH is built when the graph is loaded; see below)"
echo "OSRM osrm-extract: ${ex_s} s, peak ${ex_kb} KiB; osrm-contract: ${co_s} s, peak ${co_kb} KiB"

"$OSRM_BIN/osrm-routed" --algorithm ch -i 127.0.0.1 -p 5077 "$WORK/osrm.osrm" >"$WORK/routed.log" 2>&1 &
PIDS+=($!)
"$FLEETD" serve --data-dir "$WORK/fleet-data" --graph "$WORK/fleet.graph" --http-port 18477 --grpc-port 50477 \
  --log-level warning &
PIDS+=($!)
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:18477/healthz" >/dev/null && curl -s "http://127.0.0.1:5077/" >/dev/null && break
  sleep 0.1
done
echo "== queries: $(wc -l <"$REQUESTS") from $(basename "$REQUESTS")"
"$BENCH" --osm "$PBF" --requests "$REQUESTS" --osrm http://127.0.0.1:5077 --fleetkit http://127.0.0.1:18477 --worst 5
