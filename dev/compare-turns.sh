#!/usr/bin/env bash
# Turn costs, turn by turn, against OSRM's car profile on the same extract:
#   dev/compare-turns.sh [PBF=data/monaco.osm.pbf] [WORST=30]
# Runs osrm-extract (OSRM from dev/osrm.sh) with a copy of car.lua that prints every
# turn its turn function costs; FleetKit writes its own (routing-bench --turns-out); turns are
# matched by the coordinates of their three nodes and the largest differences are listed.
# Route choices hinge on these costs: this is where to look when route agreement drops.
set -euo pipefail
cd "$(dirname "$0")/.."
PBF=$(readlink -f "${1:-data/monaco.osm.pbf}")
WORST=${2:-30}
OSRM_BIN=$(dev/osrm.sh bin)
WORK=$(mktemp -d /tmp/compare-turns.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

cp -r "$OSRM_BIN/../share/profiles/lib" "$WORK/lib"
python3 - "$OSRM_BIN/../share/profiles/car.lua" "$WORK/car.lua" <<'PY'
import sys
profile = open(sys.argv[1]).read()
anchor = "  if profile.properties.weight_name == 'routability' then\n      -- penalize turns"
assert anchor in profile, "car.lua changed: find where process_turn sets the weight"
line = ('  io.write(string.format("TURN %d %d %d %.4f %d %s %.3f\\n", turn.from, turn.via, turn.to, '
        'turn.angle, turn.number_of_roads, tostring(turn.is_u_turn), turn.duration))\n')
open(sys.argv[2], "w").write(profile.replace(anchor, line + anchor))
PY
cp "$PBF" "$WORK/map.osm.pbf"
"$OSRM_BIN/osrm-extract" -p "$WORK/car.lua" "$WORK/map.osm.pbf" >"$WORK/osrm.log" 2>&1

(cd Benchmarks && swift build -c release --product routing-bench >/dev/null)
"$(cd Benchmarks && swift build -c release --show-bin-path)/routing-bench" --osm "$PBF" --turns-out "$WORK/fleetkit.txt"

python3 - "$WORK" "$WORST" <<'PY'
import struct, sys, tarfile
work, worst = sys.argv[1], int(sys.argv[2])
raw = tarfile.open(f"{work}/map.osrm.nbg_nodes").extractfile("/common/nbn_data/coordinates").read()
nodes = [struct.unpack_from("<ii", raw, 8 * i) for i in range(len(raw) // 8)]
key = lambda lon_lat: "%d,%d" % lon_lat
osrm = {}
for line in open(f"{work}/osrm.log"):
    if "TURN " not in line:
        continue
    f = line.split("TURN ")[1].split()
    osrm[tuple(key(nodes[int(i)]) for i in f[:3])] = (float(f[3]), int(f[4]), f[5] == "true", float(f[6]))
ours = {}
for line in open(f"{work}/fleetkit.txt"):
    f = line.split()
    ours[tuple(f[:3])] = float(f[3])
shared = sorted(set(osrm) & set(ours), key=lambda k: -abs(osrm[k][3] - ours[k]))
print(f"turns: OSRM {len(osrm)}, FleetKit {len(ours)}, matched {len(shared)}")
for bound in (0.5, 2.0):
    print(f"cost differs by more than {bound} s: {sum(abs(osrm[k][3] - ours[k]) > bound for k in shared)}")
for k in shared[:worst]:
    lon, lat = map(int, k[1].split(","))
    angle, roads, uturn, seconds = osrm[k]
    print(f"  at {lat / 1e6:.6f},{lon / 1e6:.6f}: OSRM {seconds:.2f} s (angle {angle:.1f}, roads {roads}"
          f"{', U-turn' if uturn else ''}), FleetKit {ours[k]:.2f} s")
PY
