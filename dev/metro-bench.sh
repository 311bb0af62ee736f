#!/usr/bin/env bash
# Rush hour in a metro (issue 35), release builds, on one machine:
#   1. Scale: fleetd (SQLite, --dispatch) with VEHICLES simulated drivers reporting every 5 s
#      over the report stream and RATE ride requests a minute for MINUTES, the load generator
#      (`fleet simulate`, commute profile at 08:00, hotspots from the extract) in its own
#      process: reports, bookings, waits, dispatch rounds (p50/p99 from fleetd's histogram), the
#      waiting queue, each process's CPU and memory, SearchVehicles at SEARCHES/s against that
#      fleet in the last minutes, riders' apps following their rides over WatchTrip (WATCHERS
#      streams per ride, 2 by default: push latency from a driver's report to the app holding it),
#      and how long fleetd takes to stop after SIGTERM.
#   2. Headroom: the same at 1.5× (reports every 3.3 s, 1.5× the requests and searches), so
#      that the machine's speed of the day cancels out in the ratio of the p99s.
#   3. The peer: the gRPC floor (dev/metro-floor.sh: grpc-swift 2 answering without doing anything,
#      on its own transport and on FleetGRPCTransport's, and the same answers with no gRPC library) under the
#      same message mix as the end of each run (FLOOR_WATCHERS=9000 riders watching).
#   4. Dispatch quality on the same city: batched, greedy and pooled (the rides SHARED) on the
#      same Poisson demand at three loads (50, 80 and 95 % of the fleet busy), in simulated time
#      (`dispatch-bench quality`, QUALITY_VEHICLES=500 vehicles, QUALITY_HOURS=0.5 h of demand).
#   dev/metro-bench.sh [OSM=../shared/data/cities/adelaide.osm.pbf] [VEHICLES=10000] [RATE=500] [MINUTES=10] [SEARCHES=200]
set -euo pipefail
cd "$(dirname "$0")/.."
OSM=$(readlink -f "${1:-../shared/data/cities/adelaide.osm.pbf}")
VEHICLES="${2:-10000}"; RATE="${3:-500}"; MINUTES="${4:-10}"; SEARCHES="${5:-200}"

swift build -c release --product fleetd
swift build -c release --product fleet
(cd Benchmarks && swift build -c release --product dispatch-bench && swift build -c release --product grpc-floor)
BIN="$(swift build -c release --show-bin-path)"
BENCH="$(cd Benchmarks && swift build -c release --show-bin-path)/dispatch-bench"

WORK=$(mktemp -d)
PID=
trap 'kill $PID 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"' EXIT
"$BIN/fleetd" graph build --osm "$OSM" --out "$WORK/city.graph" >/dev/null

# p50 and p99 of a Prometheus histogram between two scrapes (linear within a bucket).
quantiles() {
  python3 - "$1" "$2" "$3" <<'EOF'
import re, sys
def buckets(path, name):
    out = {}
    for line in open(path):
        m = re.match(name + r'_bucket\{le="([^"]+)"\} (\S+)', line)
        if m:
            out[float(m.group(1))] = float(m.group(2))
    return out
name = sys.argv[3]
a, b = buckets(sys.argv[1], name), buckets(sys.argv[2], name)
edges = sorted(b)
counts = [b[e] - a.get(e, 0) for e in edges]
total = counts[-1] if counts else 0
def q(share):
    if total == 0:
        return float("nan")
    rank, low, below = share * total, 0.0, 0.0
    for edge, c in zip(edges, counts):
        if c >= rank:
            high = edge if edge != float("inf") else low * 2
            return low + (high - low) * ((rank - below) / max(c - below, 1e-9))
        low, below = edge, c
    return low
print(f"{q(0.5) * 1000:.0f} {q(0.99) * 1000:.0f} {int(total)}")
EOF
}

metric() { grep -E "^$2 " "$1" | awk '{print $2}' | head -1; }

# One load: fleetd and the generator for MINUTES at a scale factor; prints a table row.
run() {
  local factor=$1 label=$2
  local data="$WORK/data-$label" interval rate searches
  interval=$(python3 -c "print(round(5 / $factor, 2))")
  rate=$(python3 -c "print(round($RATE * $factor))")
  searches=$(python3 -c "print(round($SEARCHES * $factor))")
  mkdir -p "$data"
  "$BIN/fleetd" keys add --data-dir "$data" --provider city --role server --out "$WORK/server.json" >/dev/null
  local seconds=$((MINUTES * 60))
  # SearchVehicles against the simulated fleet in the run's last stretch (200 s before its end):
  # the client loads the graph now, before fleetd starts, and waits, so that its own setup does
  # not land on the load measured.
  local searchesAt=$(($(date +%s) + 15 + (seconds - 200 > 60 ? seconds - 200 : 60)))
  timeout $((seconds + 300)) "$BENCH" search --grpc-port 50181 --key "$WORK/server.json" --graph "$WORK/city.graph" \
    --provider city --existing --vehicles "$VEHICLES" --vehicle-prefix sim- --rate "$searches" --duration 20 \
    --start-at "$searchesAt" >"$WORK/search-$label.out" 2>&1 &
  local SEARCH=$!
  sleep 8
  "$BIN/fleetd" serve --data-dir "$data" --graph "$WORK/city.graph" --dispatch --grpc-port 50181 --http-port 18181 \
    --log-level warning 2>"$WORK/fleetd-$label.log" &
  PID=$!
  for _ in $(seq 300); do curl -sf http://127.0.0.1:18181/healthz >/dev/null && break; sleep 0.1; done
  "$BIN/fleet" simulate --grpc-port 50181 --provider city --key "$WORK/server.json" --graph "$WORK/city.graph" \
    --osm "$OSM" --vehicles "$VEHICLES" --interval "$interval" --riders-per-minute "$rate" --duration "$seconds" \
    --watchers-per-ride "${WATCHERS:-2}" --print-every 60 --fleetd-pid $PID --summary "$WORK/summary-$label.json" >"$WORK/simulate-$label.out" &
  local SIM=$!
  # The first minute warms up (every vehicle going online); rounds are measured after it.
  sleep 60
  curl -sf http://127.0.0.1:18181/metrics >"$WORK/metrics-a-$label"
  wait $SEARCH || true
  wait $SIM
  curl -sf http://127.0.0.1:18181/metrics >"$WORK/metrics-b-$label"
  local rss
  rss=$(awk '/VmHWM/ {print int($2 / 1024)}' /proc/$PID/status)
  local started stopped
  started=$(date +%s.%N)
  kill -TERM $PID
  wait $PID 2>/dev/null || true
  stopped=$(date +%s.%N)
  PID=
  read -r round50 round99 rounds < <(quantiles "$WORK/metrics-a-$label" "$WORK/metrics-b-$label" fleetd_dispatch_round_duration_seconds)
  local waiting
  waiting=$(metric "$WORK/metrics-b-$label" fleetd_dispatch_waiting_rides)
  local eta99
  eta99=$(grep -E "^\| PICKUP_POINT_ETA " "$WORK/search-$label.out" | awk -F'|' '{gsub(/ /, "", $6); print $6}')
  python3 - "$WORK/summary-$label.json" "$label" "$VEHICLES" "$interval" "$rate" "$searches" "$round50" "$round99" \
    "$rounds" "$waiting" "$rss" "$(python3 -c "print(round($stopped - $started, 1))")" "${eta99:-?}" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
label, vehicles, interval, rate, searches, r50, r99, rounds, waiting, rss, stop, eta99 = sys.argv[2:]
print(f"| {label} | {vehicles} every {interval} s | {s['reportsPerSecond']:.0f} | {s['reportP50Milliseconds']:.1f} / {s['reportP99Milliseconds']:.1f} | "
      f"{rate} ({s['ridesRequested']} asked, {s['ridesBooked']} booked) | {s['bookingP99Milliseconds']:.0f} | {r50} / {r99} ({rounds}) | {float(waiting):.0f} | "
      f"{s['meanWaitSeconds']:.0f} / {s['p90WaitSeconds']:.0f} | {searches}/s: {eta99} | {s['pushP99Milliseconds']:.1f} ({s['watchersPeak']}) | {s['fleetdCores']:.2f} ({s['fleetdCores'] / 2 * 100:.0f} %) | {s['simulatorCores']:.2f} | {rss} | {stop} |")
EOF
}

echo "fleetd $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(nproc) cores, $(basename "$OSM"), SQLite (WAL, synchronous=FULL), $MINUTES min per load"
echo
echo "| load | vehicles reporting | reports/s | report p50 / p99 ms | rides a minute | booking p99 ms | dispatch round p50 / p99 ms (rounds) | waiting at the end | wait mean / p90 s | SearchVehicles PICKUP_POINT_ETA p99 ms | WatchTrip push p99 ms (most watching) | fleetd cores (of 2) | generator cores | fleetd peak MB | stop s |"
echo "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
run 1 "1×"
run 1.5 "1.5×"
echo
echo "The peer, the gRPC floor (doing nothing: grpc-swift on its transport and on FleetGRPCTransport's, and no library) under the same message mix as the end of each run:"
dev/metro-floor.sh "$VEHICLES" "${FLOOR_WATCHERS:-9000}" "$SEARCHES" 60 2>/dev/null | grep -E '^\|'
for label in "1×" "1.5×"; do
  echo
  echo "The generator's own lines, $label:"
  cat "$WORK/simulate-$label.out"
  echo "SearchVehicles against the simulated fleet, $label:"
  cat "$WORK/search-$label.out"
done
echo
echo "Dispatch quality, batched / greedy / pooled:"
"$BENCH" quality --graph "$WORK/city.graph" --vehicles "${QUALITY_VEHICLES:-500}" --hours "${QUALITY_HOURS:-0.5}" \
  --loads 0.5,0.8,0.95 --modes batched,greedy,pooled
