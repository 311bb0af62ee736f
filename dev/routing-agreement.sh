#!/usr/bin/env bash
# FleetKit's routes against OSRM's on every extract, side by side on loopback (release builds):
# Monaco (with OSRM's 1,000 real queries), every extract in $CITIES (default ../shared/data/cities,
# when there; any folder of .osm.pbf files), and cuts whose bounding boxes slice through the networks (osmium, `-s simple`: ways cut at the
# border, as in extracts cut out of bigger areas). Per extract: seeded point pairs, half uniform
# in its area and half on drivable roads moved up to 30 m off them; the share within 2 % in
# distance and 10 % in duration of OSRM's, how often the start or end snap more than 10 m apart,
# the answers only one engine gives (by the other's error code), and the median /route latency
# over HTTP against OSRM's.
#   dev/routing-agreement.sh [PAIRS=300]
# ONLY=NAME,… runs only those extracts (e.g. ONLY=monaco,adelaide-cbd); ARGS="…" goes to the
# comparison (e.g. ARGS="--maneuver-diffs 10 --steps-shown 5" lists where guidance differs).
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS="${1:-300}"
CITIES=$(readlink -f "${CITIES:-../shared/data/cities}" 2>/dev/null || true)
command -v osmium >/dev/null || { echo "needs osmium: apt-get install osmium-tool" >&2; exit 1; }

swift build -c release --product fleetd
(cd Benchmarks && swift build -c release --product routing-agreement)
FLEETD="$(swift build -c release --show-bin-path)/fleetd"
BENCH="$(cd Benchmarks && swift build -c release --show-bin-path)/routing-agreement"
PEER=dev/osrm.sh

WORK=$(mktemp -d)
PID=
trap 'kill $PID 2>/dev/null || true; "$PEER" stop 5088 || true; wait 2>/dev/null || true; rm -rf "$WORK"' EXIT

# Cuts: NAME SOURCE LON1,LAT1,LON2,LAT2 (a city's only when its extract is there).
add_cut() {
  [ -f "$2" ] || return 0
  osmium extract -s simple -b "$3" "$2" -o "$WORK/$1.osm.pbf" --overwrite --no-progress
  CUTS+=("$1=$WORK/$1.osm.pbf")
}
CUTS=()
add_cut monaco-cut "$PWD/data/monaco.osm.pbf" 7.405,43.725,7.428,43.745
add_cut paris-cut "$CITIES/paris-champs-elysees.osm.pbf" 2.285,48.862,2.315,48.880
add_cut adelaide-cbd "$CITIES/adelaide.osm.pbf" 138.57,-34.95,138.63,-34.90
add_cut vaduz-cut "$CITIES/liechtenstein.osm.pbf" 9.50,47.12,9.56,47.17

EXTRACTS=("monaco=$PWD/data/monaco.osm.pbf")
if [ -n "$CITIES" ] && [ -d "$CITIES" ]; then
  for f in "$CITIES"/*.osm.pbf; do EXTRACTS+=("$(basename "$f" .osm.pbf)=$f"); done
fi
EXTRACTS+=("${CUTS[@]}")

echo "fleetd $(git rev-parse --short HEAD 2>/dev/null || echo '?') against OSRM $(sed -n 's/^VERSION=//p' dev/osrm.sh) (car profile, CH), $PAIRS pairs per extract, $(nproc) cores"
echo
first=--header
for entry in "${EXTRACTS[@]}"; do
  name=${entry%%=*}; pbf=${entry#*=}
  if [ -n "${ONLY:-}" ] && [[ ",$ONLY," != *",$name,"* ]]; then continue; fi
  "$FLEETD" graph build --osm "$pbf" --out "$WORK/$name.graph" >/dev/null
  rm -rf "$WORK/data"
  "$FLEETD" serve --data-dir "$WORK/data" --graph "$WORK/$name.graph" --grpc-port 50488 --http-port 18488 \
    --log-level error &
  PID=$!
  osrm=$("$PEER" start "$pbf" 5088)
  for _ in $(seq 600); do curl -sf http://127.0.0.1:18488/healthz >/dev/null && break; sleep 0.1; done
  extra=()
  [ "$name" = monaco ] && extra=(--requests "$PWD/data/monaco.requests")
  "$BENCH" --name "$name" --osm "$pbf" --osrm "$osrm" --fleetkit http://127.0.0.1:18488 --pairs "$PAIRS" \
    ${extra[@]+"${extra[@]}"} $first ${ARGS:-}
  first=
  kill $PID; wait $PID 2>/dev/null || true; PID=
  "$PEER" stop 5088
done
