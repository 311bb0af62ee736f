#!/usr/bin/env bash
# Long requests beside the fleet's traffic: fleetd (release, SQLite, --dispatch) with `fleet
# simulate` (VEHICLES drivers reporting every 5 s, RATE rides a minute, 2 watchers per ride) for
# 240 s, and from 120 s to 210 s TABLES `/table` requests a second, each of 100 random points
# within 8 km of CENTRE (lat,lng; Adelaide's by default: give another extract's centre with it).
# Prints the generator's lines (report and push p99 per 30 s: the window against the rest) and
# the tables' own latency.
#   dev/loop-bench.sh [OSM=../shared/data/cities/adelaide.osm.pbf] [CENTRE=-34.93,138.60] [VEHICLES=5000] [RATE=250] [TABLES=4]
set -euo pipefail
cd "$(dirname "$0")/.."
OSM=$(readlink -f "${1:-../shared/data/cities/adelaide.osm.pbf}")
CENTRE="${2:--34.93,138.60}"; VEHICLES="${3:-5000}"; RATE="${4:-250}"; TABLES="${5:-4}"

swift build -c release --product fleetd
swift build -c release --product fleet
BIN="$(swift build -c release --show-bin-path)"
WORK=$(mktemp -d)
PID=
trap 'kill $PID 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"' EXIT
"$BIN/fleetd" graph build --osm "$OSM" --out "$WORK/city.graph" >/dev/null
"$BIN/fleetd" keys add --data-dir "$WORK/data" --provider city --role server --out "$WORK/server.json" >/dev/null
"$BIN/fleetd" serve --data-dir "$WORK/data" --graph "$WORK/city.graph" --dispatch --grpc-port 50171 \
  --http-port 18171 --log-level warning 2>"$WORK/fleetd.log" &
PID=$!
for _ in $(seq 300); do curl -sf http://127.0.0.1:18171/healthz >/dev/null && break; sleep 0.1; done
"$BIN/fleet" simulate --grpc-port 50171 --provider city --key "$WORK/server.json" --graph "$WORK/city.graph" \
  --osm "$OSM" --vehicles "$VEHICLES" --riders-per-minute "$RATE" --duration 240 --watchers-per-ride 2 \
  --print-every 30 --fleetd-pid "$PID" &
SIM=$!
sleep 120
python3 - "$CENTRE" "$TABLES" <<'PY'
import math, random, sys, threading, time, urllib.request
lat, lng = map(float, sys.argv[1].split(","))
rate, seconds = float(sys.argv[2]), 90
random.seed(7)
def point():
    # Uniform in a square of ±8 km around the centre.
    dy, dx = random.uniform(-8000, 8000), random.uniform(-8000, 8000)
    return f"{lng + dx / (111_320 * math.cos(math.radians(lat))):.5f},{lat + dy / 111_320:.5f}"
took, failed, lock = [], [0], threading.Lock()
def one(url):
    started = time.monotonic()
    try:
        urllib.request.urlopen(url, timeout=30).read()
        with lock: took.append(time.monotonic() - started)
    except Exception:
        with lock: failed[0] += 1
start, sent, threads = time.monotonic(), 0, []
while time.monotonic() - start < seconds:
    url = "http://127.0.0.1:18171/table/v1/driving/" + ";".join(point() for _ in range(100))
    thread = threading.Thread(target=one, args=(url,))
    thread.start()
    threads.append(thread)
    sent += 1
    time.sleep(max(0, start + sent / rate - time.monotonic()))
for thread in threads: thread.join()
took.sort()
q = lambda p: took[min(len(took) - 1, int(p * len(took)))] * 1000
print(f"/table 100x100 from 120 s to 210 s: {len(took)} answered, {failed[0]} failed; "
      f"p50 {q(0.5):.0f} ms, p99 {q(0.99):.0f} ms, max {took[-1] * 1000:.0f} ms", flush=True)
PY
wait $SIM
kill -TERM $PID; wait $PID
