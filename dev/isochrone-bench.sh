#!/usr/bin/env bash
# Isochrones (`/isochrone/v1/driving`) on each extract given, release build, in one run per
# extract: latency over HTTP for 5/10/15-minute and 1/3/5-km contours from random points on the
# roads, beside a 100x100 `/table` on the same fleetd (the query whose answers the contours must
# agree with), and the agreement itself: random points around each start, inside a contour
# reached within the limit by `/table` (5 % allowed for the grid), outside not under 95 % of it.
#   dev/isochrone-bench.sh [PBF…] (default: data/monaco.osm.pbf and every city in ../shared/data/cities)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v osmium >/dev/null || { echo "needs osmium: apt-get install osmium-tool" >&2; exit 1; }
if [ $# -eq 0 ]; then set -- data/monaco.osm.pbf ../shared/data/cities/*.osm.pbf; fi

swift build -c release --product fleetd
FLEETD="$(swift build -c release --show-bin-path)/fleetd"
WORK=$(mktemp -d)
PID=
trap 'kill $PID 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$WORK"' EXIT

echo "fleetd $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(nproc) cores"
echo
echo "| extract | contours | requests | p50 ms | p99 ms | points checked | agree | inside |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for pbf in "$@"; do
  name=$(basename "$pbf" .osm.pbf)
  "$FLEETD" graph build --osm "$pbf" --out "$WORK/$name.graph" >/dev/null
  "$FLEETD" serve --data-dir "$WORK/data-$name" --graph "$WORK/$name.graph" --http-port 18577 --grpc-port 50577 \
    --log-level warning &
  PID=$!
  for _ in $(seq 300); do curl -sf http://127.0.0.1:18577/healthz >/dev/null && break; sleep 0.1; done
  python3 - "$name" "$(osmium fileinfo -e -g data.bbox "$pbf")" <<'EOF'
import json, random, statistics, sys, time, urllib.request
name = sys.argv[1]
base = "http://127.0.0.1:18577"
get = lambda path: json.load(urllib.request.urlopen(base + path, timeout=120))
random.seed(11)

# Starts on the roads: random points in the middle half of the extract's box, snapped by /nearest.
west, south, east, north = map(float, sys.argv[2].strip("()").split(","))
box = (south + (north - south) / 4, west + (east - west) / 4, north - (north - south) / 4, east - (east - west) / 4)
spread = (min(0.1, (east - west) / 4), min(0.07, (north - south) / 4))
def starts(count):
    found = []
    while len(found) < count:
        lat = random.uniform(box[0], box[2]); lng = random.uniform(box[1], box[3])
        near = get(f"/nearest/v1/driving/{lng},{lat}")["waypoints"][0]
        if near["distance"] < 100:
            found.append(tuple(near["location"]))
    return found

def inside(feature, lng, lat):
    g = feature["geometry"]
    polygons = [g["coordinates"]] if g["type"] == "Polygon" else g["coordinates"]
    for rings in polygons:
        crossings = 0
        for ring in rings:
            for (x1, y1), (x2, y2) in zip(ring, ring[1:]):
                if (y1 > lat) != (y2 > lat) and lng < x1 + (lat - y1) / (y2 - y1) * (x2 - x1):
                    crossings += 1
        if crossings % 2:
            return True
    return False

def timed(path):
    t = time.perf_counter()
    body = get(path)
    return body, (time.perf_counter() - t) * 1000

points = starts(40)
for key, values, scale in [("contours_minutes", [5, 10, 15], 60), ("contours_meters", [1000, 3000, 5000], 1)]:
    times, checked, agreed, inside_count = [], 0, 0, 0
    for i, (lng, lat) in enumerate(points):
        iso, ms = timed(f"/isochrone/v1/driving/{lng},{lat}?{key}={','.join(map(str, values))}")
        times.append(ms)
        if i >= 10:
            continue
        # 99 random points around (up to about 8 km), checked against /table from the start.
        around = [(lng + random.uniform(-spread[0], spread[0]), lat + random.uniform(-spread[1], spread[1])) for _ in range(99)]
        table = get("/table/v1/driving/" + ";".join(f"{x},{y}" for x, y in [(lng, lat)] + around)
                    + "?sources=0&annotations=duration,distance")
        measured = table["durations"][0][1:] if scale == 60 else table["distances"][0][1:]
        for feature in iso["features"]:
            limit = feature["properties"]["contour"] * scale
            for (x, y), m, d in zip(around, measured, table["destinations"][1:]):
                if d["distance"] > 500:
                    continue
                isin = inside(feature, x, y)
                checked += 1
                inside_count += isin
                if (m is not None and m <= 1.05 * limit) if isin else (m is None or m >= 0.95 * limit):
                    agreed += 1
    times.sort()
    p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
    label = ",".join(map(str, values)) + (" min" if scale == 60 else " m")
    print(f"| {name} | {label} | {len(times)} | {statistics.median(times):.1f} | {p99:.1f} | {checked} | "
          f"{100 * agreed / max(checked, 1):.1f} % | {inside_count} |")
# The query the contours agree with, on the same fleetd: 100x100 tables.
times = []
for _ in range(10):
    some = random.sample(points, min(len(points), 40))
    coords = some + [(x + random.uniform(-spread[0], spread[0]), y + random.uniform(-spread[1], spread[1])) for x, y in some]
    coords = (coords * 3)[:100]
    _, ms = timed("/table/v1/driving/" + ";".join(f"{x},{y}" for x, y in coords))
    times.append(ms)
print(f"| {name} | /table 100×100 (the reference) | {len(times)} | {statistics.median(times):.1f} | {max(times):.1f} | | | |")
EOF
  kill $PID; wait $PID 2>/dev/null || true; PID=
done
