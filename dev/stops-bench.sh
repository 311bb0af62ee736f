#!/usr/bin/env bash
# Stop ordering (issue 36, `:optimizeStops`): delivery days of 50 and 200 stops on each extract's
# roads, in the order the tasks were created against StopOrdering's order and a lower bound on
# the driving; a third of the stops with two-hour windows, then none (release builds).
#   dev/stops-bench.sh [EXTRACT.osm.pbf …]   (default: data/monaco.osm.pbf and ../shared/data/cities/*)
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRACTS=("$@")
if [ ${#EXTRACTS[@]} -eq 0 ]; then
  EXTRACTS=(data/monaco.osm.pbf)
  for city in ../shared/data/cities/*.osm.pbf; do [ -f "$city" ] && EXTRACTS+=("$city"); done
fi
swift build -c release --product fleetd
(cd Benchmarks && swift build -c release --product dispatch-bench)
BIN="$(swift build -c release --show-bin-path)"
BENCH="$(cd Benchmarks && swift build -c release --show-bin-path)/dispatch-bench"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for extract in "${EXTRACTS[@]}"; do
  name=$(basename "$extract" .osm.pbf)
  "$BIN/fleetd" graph build --osm "$extract" --out "$WORK/$name.graph" >/dev/null
  for windowed in 0.33 0; do
    echo; echo "### $name, windows on a share of $windowed of the stops"
    "$BENCH" stops --graph "$WORK/$name.graph" --stops 50,200 --days 3 --windowed "$windowed"
  done
done
