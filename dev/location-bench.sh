#!/usr/bin/env bash
# Location-service benchmark: updates delivered on a recorded drive with and without the filters,
# reverse-geocoding and place-search latency on Monaco (in-process), coordinate conversions per second.
#   dev/location-bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
(cd Benchmarks && swift build -c release --product location-bench)
"$(cd Benchmarks && swift build -c release --show-bin-path)/location-bench"
