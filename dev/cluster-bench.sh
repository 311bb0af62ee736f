#!/usr/bin/env bash
# fleetd on PostgreSQL next to SQLite, in one run on this machine (the generator, PostgreSQL and
# fleetd all share it). Release builds; each run on a fresh store.
#   1. Durable location updates: simulated vehicles send UpdateVehicle(last_location) as soon as
#      the previous one is acknowledged (fleet-load, closed loop), on SQLite, on PostgreSQL with
#      one fleetd, and on PostgreSQL with two fleetd instances (the connections go to them in
#      turn and each vehicle keeps to one, as behind a load balancer); once for each count in
#      VEHICLES. A closed loop's rate is its population over its latency until the server
#      saturates, and PostgreSQL's commits take longer than SQLite's, so each store's capacity is
#      its best rate over the counts. Prints each run, the ratios to SQLite per count, and the
#      ratio of capacities.
#   2. Push: WATCHERS riders watching trips (WatchTrip) while 1,000 drivers on the Monaco graph
#      report 200 positions/s in all: on one SQLite fleetd, on one PostgreSQL fleetd, and across
#      two PostgreSQL instances (drivers on A, riders on B). Prints the latency from UpdateVehicle
#      to a rider holding the new trip.
#   dev/cluster-bench.sh [VEHICLES="100 300"] [SECONDS=20] [CONNECTIONS=4] [WATCHERS=1000]
set -euo pipefail
cd "$(dirname "$0")/.."
VEHICLES="${1:-100 300}"; SECONDS_MEASURED="${2:-20}"; CONNECTIONS="${3:-4}"; WATCHERS="${4:-1000}"

swift build -c release --product fleetd
(cd Benchmarks && swift build -c release --product fleet-load)
FLEETD="$(swift build -c release --show-bin-path)/fleetd"
LOAD="$(cd Benchmarks && swift build -c release --show-bin-path)/fleet-load"

WORK=$(mktemp -d /tmp/fleetd-cluster-bench.XXXXXX)
chmod 755 "$WORK" # the cluster's owner (postgres, when run as root) must reach its directory
PIDS=()
stop_all() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  PIDS=()
}
trap 'stop_all; dev/throwaway-postgres.sh stop "$WORK/pg" 2>/dev/null || true; rm -rf "$WORK"' EXIT
ADMIN=$(dev/throwaway-postgres.sh start "$WORK/pg" 55433)
"$FLEETD" graph build --osm data/monaco.osm.pbf --out "$WORK/monaco.graph" >/dev/null

# fleet NAME sqlite|postgres INSTANCES [ARGS...]: a fresh store, a server key, then INSTANCES
# fleetd processes on it (instance i on gRPC 50161+i, HTTP 18161+i).
fleet() {
  local name=$1 store=$2 count=$3; shift 3
  local data="$WORK/$name" options=()
  mkdir -p "$data"
  if [ "$store" = postgres ]; then
    psql "$ADMIN" -qc "CREATE DATABASE $name"
    options=(--store "postgres://fleet@127.0.0.1:55433/$name?sslmode=disable")
  fi
  "$FLEETD" keys add --data-dir "$data" "${options[@]}" --provider bench --role server --out "$data/server.json" >/dev/null
  for i in $(seq 0 $((count - 1))); do
    "$FLEETD" serve --data-dir "$data" "${options[@]}" "$@" --grpc-port $((50161 + i)) --http-port $((18161 + i)) \
      --log-level warning &
    PIDS+=($!)
    local up=
    for _ in $(seq 300); do curl -sf "http://127.0.0.1:$((18161 + i))/healthz" >/dev/null && up=1 && break; sleep 0.1; done
    [ -n "$up" ] || { echo "fleetd did not start" >&2; exit 1; }
  done
  # Instances count each other by heartbeat (every 2 s) before they share quotas and reads.
  [ "$count" -gt 1 ] && sleep 3
  KEY="$data/server.json"
}

# updates NAME sqlite|postgres INSTANCES COUNT: the closed-loop load of COUNT vehicles, its figures
# kept in NAME.out.
updates() {
  local name=$1 count=$4 ports=()
  fleet "$1" "$2" "$3"
  for i in $(seq 0 $(($3 - 1))); do ports+=(--grpc-port $((50161 + i))); done
  echo "== updates: $name"
  "$LOAD" "${ports[@]}" --key "$KEY" --vehicles "$count" --duration "$SECONDS_MEASURED" \
    --connections "$CONNECTIONS" --rpc update --client raw | tee "$WORK/$name.out"
  echo "fleetd CPU time: $(ps -o cputime= -p "${PIDS[@]}" | tr '\n' ' ')"
  stop_all
  echo
}

# push NAME sqlite|postgres INSTANCES: riders on the last instance, drivers on the first.
push() {
  local name=$1 count=$3
  fleet "$@" --graph "$WORK/monaco.graph"
  echo "== push: $name"
  "$LOAD" --grpc-port 50161 --watch-grpc-port $((50161 + count - 1)) --key "$KEY" --requests data/monaco.requests \
    --vehicles 1000 --watchers "$WATCHERS" --rate 200 --duration "$SECONDS_MEASURED" --connections "$CONNECTIONS"
  stop_all
  echo
}

echo "fleetd $(git rev-parse --short HEAD 2>/dev/null || echo '?') on $(nproc) cores; vehicles: $VEHICLES; ${SECONDS_MEASURED} s per run"
echo
RUNS=()
for count in $VEHICLES; do
  updates "sqlite_$count" sqlite 1 "$count"
  updates "postgres_1_$count" postgres 1 "$count"
  updates "postgres_2_$count" postgres 2 "$count"
  RUNS+=("$count")
done
python3 - "$WORK" "${RUNS[@]}" <<'PY'
import re, sys
work, counts = sys.argv[1], sys.argv[2:]
def rate(name):
    text = open(f"{work}/{name}.out").read()
    return float(re.search(r"^throughput: ([0-9.]+) acknowledged updates/s", text, re.M).group(1))
best = {"sqlite": 0.0, "postgres_1": 0.0, "postgres_2": 0.0}
for count in counts:
    r = {store: rate(f"{store}_{count}") for store in best}
    for store in best:
        best[store] = max(best[store], r[store])
    print(f"{count} vehicles: SQLite {r['sqlite']:.0f}/s, PostgreSQL one instance {r['postgres_1']:.0f}/s"
          f" ({r['postgres_1'] / r['sqlite']:.2f}x), two instances {r['postgres_2']:.0f}/s ({r['postgres_2'] / r['sqlite']:.2f}x)")
print(f"capacity (best rate of each): SQLite {best['sqlite']:.0f}/s, PostgreSQL one instance {best['postgres_1']:.0f}/s"
      f" = {best['postgres_1'] / best['sqlite']:.2f}x SQLite (target >= 0.6), two instances {best['postgres_2']:.0f}/s"
      f" = {best['postgres_2'] / best['sqlite']:.2f}x")
PY
echo
push push_sqlite sqlite 1
push push_postgres_1 postgres 1
push push_postgres_2 postgres 2
