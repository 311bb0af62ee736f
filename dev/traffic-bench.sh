#!/usr/bin/env bash
# Learned traffic in routing (issue 37), release build, per extract: re-customization time with
# a fifth of the roads slowed, route latency idle and while customizations run beside it, and
# the congestion simulation (an arterial stretch at a fifth of its speed, cars reporting through
# trip progress, one customization a minute): probes on the best route, jam metres driven and
# ETA error against the simulated truth, cycle by cycle from free flow.
#   dev/traffic-bench.sh [PBF…] (default: data/monaco.osm.pbf and every city in ../shared/data/cities)
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if [ $# -eq 0 ]; then
  set -- data/monaco.osm.pbf ../shared/data/cities/*.osm.pbf
  # And cuts of our own, as dev/routing-agreement.sh makes them (osmium, when installed).
  if command -v osmium >/dev/null; then
    for cut in "adelaide-cbd ../shared/data/cities/adelaide.osm.pbf 138.57,-34.95,138.63,-34.90" \
      "vaduz-cut ../shared/data/cities/liechtenstein.osm.pbf 9.50,47.12,9.56,47.17"; do
      read -r name source box <<<"$cut"
      [ -f "$source" ] || continue
      osmium extract -s simple -b "$box" "$source" -o "$WORK/$name.osm.pbf" --overwrite --no-progress
      set -- "$@" "$WORK/$name.osm.pbf"
    done
  fi
fi
EXTRACTS=()
for pbf in "$@"; do EXTRACTS+=("$(realpath "$pbf")"); done
cd Benchmarks
swift build -c release --product traffic-bench
echo "FleetKit $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(nproc) cores"
echo
"$(swift build -c release --show-bin-path)/traffic-bench" "${EXTRACTS[@]}"
