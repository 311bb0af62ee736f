#!/usr/bin/env bash
# The gRPC floor under a metro's message mix (issue 35): grpc-floor (grpc-swift 2 doing nothing:
# no auth, domain or store) serving the report stream, WatchTrip and SearchVehicles, driven by
# `grpc-floor metro` in its own process with what `dev/metro-bench.sh` puts on fleetd at the end
# of its run: VEHICLES streams reporting every 5 s, WATCHERS riders' streams (a push per report),
# SEARCHES SearchVehicles a second; then the same at 1.5× (reports every 3.3 s, 1.5× the watchers
# and searches). Prints latencies and both processes' CPU, to set beside fleetd's.
# Three servers (FLOORS, all by default): `nio`, grpc-swift on its own HTTP/2 transport; `frames`,
# grpc-swift on FleetGRPCTransport's FrameServerTransport; `raw`, the same answers written as HTTP/2 frames
# with no gRPC library at all (what a transport could at best cost).
#   [FLOORS="nio frames raw"] dev/metro-floor.sh [VEHICLES=10000] [WATCHERS=9000] [SEARCHES=200] [SECONDS=60]
set -euo pipefail
cd "$(dirname "$0")/.."
VEHICLES="${1:-10000}"; WATCHERS="${2:-9000}"; SEARCHES="${3:-200}"; SECONDS_MEASURED="${4:-60}"
(cd Benchmarks && swift build -c release --product grpc-floor)
FLOOR="$(cd Benchmarks && swift build -c release --show-bin-path)/grpc-floor"
PID=
trap 'kill $PID 2>/dev/null || true; wait 2>/dev/null || true' EXIT

echo "$(nproc) cores; $VEHICLES vehicles, $WATCHERS watchers, $SEARCHES searches/s at 1×; ${SECONDS_MEASURED} s measured after 20 s"
printf '%s\n' \
  "| run | scale | reports/s | report p50 / p99 ms | pushes/s | push p50 / p99 ms | searches/s | search p50 / p99 ms | server cores | server MB | load cores |" \
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for SCALE in 1 1.5; do
  for SERVER in ${FLOORS:-nio frames raw}; do
    case "$SERVER" in
      nio) SERVE=(serve) ;;
      frames) SERVE=(serve --transport frames) ;;
      raw) SERVE=(serve-raw) ;;
      *) echo "dev/metro-floor.sh: FLOORS takes nio, frames and raw, not '$SERVER'" >&2; exit 2 ;;
    esac
    "$FLOOR" "${SERVE[@]}" --grpc-port 50172 &
    PID=$!
    sleep 1
    "$FLOOR" metro --grpc-port 50172 --server-pid $PID --vehicles "$VEHICLES" --watchers "$WATCHERS" \
      --searches "$SEARCHES" --scale $SCALE --duration "$SECONDS_MEASURED" --label "grpc-floor $SERVER"
    kill $PID; wait $PID 2>/dev/null || true; PID=
  done
done
