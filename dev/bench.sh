#!/usr/bin/env bash
# Load benchmark: a release fleetd on a fresh SQLite data directory, and fleet-load sending
# UpdateVehicle(last_location) over gRPC from N concurrent simulated vehicles, on this machine;
# then the same from grpc-swift's client, then GetVehicle as the read-only baseline, and last the
# same update load against grpc-floor (grpc-swift 2 answering without doing anything): the
# ceiling of the gRPC stack itself on this machine.
#   dev/bench.sh [VEHICLES] [SECONDS] [CONNECTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
VEHICLES="${1:-100}"; SECONDS_MEASURED="${2:-20}"; CONNECTIONS="${3:-4}"

swift build -c release --product fleetd
(cd Benchmarks && swift build -c release --product fleet-load && swift build -c release --product grpc-floor)
FLEETD="$(swift build -c release --show-bin-path)/fleetd"
LOAD="$(cd Benchmarks && swift build -c release --show-bin-path)/fleet-load"
FLOOR="$(cd Benchmarks && swift build -c release --show-bin-path)/grpc-floor"

DATA=$(mktemp -d /tmp/fleetd-bench.XXXXXX)
FLOOR_PID=
trap 'kill $PID $FLOOR_PID 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$DATA"' EXIT
"$FLEETD" keys add --data-dir "$DATA" --provider bench --role server --out "$DATA/server.json" >/dev/null
"$FLEETD" serve --data-dir "$DATA" --grpc-port 50151 --http-port 18151 --log-level warning &
PID=$!
for _ in $(seq 100); do curl -sf http://127.0.0.1:18151/healthz >/dev/null && break; sleep 0.1; done

echo "fleetd $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(nproc) cores, SQLite (WAL, synchronous=FULL) in $DATA"
# update/raw is the headline figure: the lean HTTP/2 client leaves the cores to fleetd.
# update/grpc is the same load from grpc-swift's client; get/raw is the read-only baseline.
for RUN in update/raw update/grpc get/raw; do
  before=$(ps -o cputime= -p $PID)
  "$LOAD" --port 50151 --key "$DATA/server.json" --vehicles "$VEHICLES" --duration "$SECONDS_MEASURED" \
    --connections "$CONNECTIONS" --rpc "${RUN%/*}" --client "${RUN#*/}"
  echo "fleetd CPU time: $before -> $(ps -o cputime= -p $PID)"
  echo
done
kill $PID; wait $PID 2>/dev/null || true

echo "grpc-floor: the same update load against grpc-swift 2 doing nothing (no auth, domain or storage)"
"$FLOOR" --port 50152 &
FLOOR_PID=$!
sleep 1
before=$(ps -o cputime= -p $FLOOR_PID)
"$LOAD" --port 50152 --key "$DATA/server.json" --vehicles "$VEHICLES" --duration "$SECONDS_MEASURED" \
  --connections "$CONNECTIONS" --rpc update --client raw
echo "grpc-floor CPU time: $before -> $(ps -o cputime= -p $FLOOR_PID)"
