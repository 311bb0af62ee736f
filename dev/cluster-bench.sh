#!/usr/bin/env bash
# Durable location updates on PostgreSQL next to SQLite, in one run on this machine: a release
# fleetd on a fresh SQLite data directory, then on a throwaway PostgreSQL cluster
# (dev/throwaway-postgres.sh; synchronous_commit on), each loaded by fleet-load sending
# UpdateVehicle(last_location) from N simulated vehicles; the generator, PostgreSQL and fleetd
# share the machine. Prints each run's figures and the PostgreSQL/SQLite ratio.
#   dev/cluster-bench.sh [VEHICLES] [SECONDS] [CONNECTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
VEHICLES="${1:-100}"; SECONDS_MEASURED="${2:-20}"; CONNECTIONS="${3:-4}"

swift build -c release --product fleetd
(cd Benchmarks && swift build -c release --product fleet-load)
FLEETD="$(swift build -c release --show-bin-path)/fleetd"
LOAD="$(cd Benchmarks && swift build -c release --show-bin-path)/fleet-load"

WORK=$(mktemp -d /tmp/fleetd-cluster-bench.XXXXXX)
PID=
trap 'kill $PID 2>/dev/null || true; wait 2>/dev/null || true; dev/throwaway-postgres.sh stop "$WORK/pg" 2>/dev/null || true; rm -rf "$WORK"' EXIT
STORE=$(dev/throwaway-postgres.sh start "$WORK/pg" 55433)

# run NAME [--store URL]: one fleetd, one load; prints fleet-load's figures and keeps updates/s.
run() {
  local name=$1; shift
  local data="$WORK/$name"
  mkdir -p "$data"
  "$FLEETD" keys add --data-dir "$data" "$@" --provider bench --role server --out "$data/server.json" >/dev/null
  "$FLEETD" serve --data-dir "$data" "$@" --grpc-port 50161 --http-port 18161 --log-level warning &
  PID=$!
  for _ in $(seq 200); do curl -sf http://127.0.0.1:18161/healthz >/dev/null && break; sleep 0.1; done
  echo "== $name"
  "$LOAD" --port 50161 --key "$data/server.json" --vehicles "$VEHICLES" --duration "$SECONDS_MEASURED" \
    --connections "$CONNECTIONS" --rpc update --client raw | tee "$WORK/$name.out"
  kill $PID; wait $PID 2>/dev/null || true
  PID=
  echo
}

echo "fleetd $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(nproc) cores; $VEHICLES vehicles, ${SECONDS_MEASURED} s each"
run sqlite
run postgres --store "$STORE"
rate() { sed -nE 's/^throughput: ([0-9.]+) acknowledged updates\/s.*/\1/p' "$WORK/$1.out"; }
python3 - "$(rate sqlite)" "$(rate postgres)" <<'PY'
import sys
sqlite, postgres = float(sys.argv[1]), float(sys.argv[2])
print(f"PostgreSQL / SQLite durable updates/s: {postgres:.0f} / {sqlite:.0f} = {postgres / sqlite:.2f} (target >= 0.6)")
PY
