#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback, for trying fleetd on PostgreSQL and for the
# benchmarks; never the system's cluster. Needs Debian's postgresql package.
#   dev/throwaway-postgres.sh start DIR [PORT]   # initdb in DIR, start it, print the --store URL
#   dev/throwaway-postgres.sh restart DIR        # restart it at once, as a crash would
#   dev/throwaway-postgres.sh stop DIR           # stop it (then rm -rf DIR)
# initdb refuses root, so as root the cluster belongs to the postgres user.
set -euo pipefail
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$BIN/initdb" ] || { echo "PostgreSQL is not installed: sudo apt-get install postgresql" >&2; exit 1; }
as_owner() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
DIR="${2:?usage: $0 start|restart|stop DIR [PORT]}"
case "$1" in
  start)
    PORT="${3:-55432}"
    mkdir -p "$DIR"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$DIR"
    as_owner "$BIN/initdb" -D "$DIR/data" -U fleet -A trust -E UTF8 >/dev/null
    as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w start \
      -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c max_connections=200" >/dev/null
    "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U fleet -d postgres -qc "CREATE DATABASE fleet"
    echo "postgres://fleet@127.0.0.1:$PORT/fleet?sslmode=disable"
    ;;
  restart)
    as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -m immediate -w restart >/dev/null
    ;;
  stop)
    as_owner "$BIN/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null
    ;;
  *) echo "usage: $0 start|restart|stop DIR [PORT]" >&2; exit 2 ;;
esac
