#!/usr/bin/env bash
# Location-service benchmark: coordinate conversions per second (WGS-84, GCJ-02, BD-09), one core.
#   dev/location-bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
(cd Benchmarks && swift build -c release --product location-bench)
"$(cd Benchmarks && swift build -c release --show-bin-path)/location-bench"
