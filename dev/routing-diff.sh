#!/usr/bin/env bash
# Why FleetKit and OSRM route a pair of points differently: both snapped ends with the OSM ways
# and tags they are on, both routes as OSM ways side by side, where they part, and FleetKit's
# profile decision for every way on one route only (with OSRM's speed on it).
#   dev/routing-diff.sh PBF FROM_LAT,FROM_LNG TO_LAT,TO_LNG
set -euo pipefail
cd "$(dirname "$0")/.."
PBF=$(readlink -f "$1")
(cd Benchmarks && swift build -c release --product routing-diff >/dev/null)
BIN="$(cd Benchmarks && swift build -c release --show-bin-path)/routing-diff"
trap 'dev/osrm.sh stop 5089 || true' EXIT
OSRM=$(dev/osrm.sh start "$PBF" 5089)
"$BIN" --osm "$PBF" --osrm "$OSRM" --from "$2" --to "$3"
