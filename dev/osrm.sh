#!/usr/bin/env bash
# OSRM, the reference open-source router, on loopback, for the tools that compare FleetKit's
# routes with OSRM's. OSRM's own binaries come from the osrm-bindings wheel on PyPI (a pinned
# version, unpacked into a cache); nothing is compiled.
#   dev/osrm.sh bin                 the folder with osrm-extract, osrm-contract, osrm-routed
#   dev/osrm.sh start PBF [PORT]    prepare PBF (car profile, contraction hierarchy; cached by the
#                                   file's content) and serve it on 127.0.0.1:PORT (default 5000);
#                                   prints the base URL
#   dev/osrm.sh stop [PORT]         stop the server started for PORT
set -euo pipefail
VERSION=26.10.0
HOME_DIR="${FLEETKIT_OSRM_CACHE:-$HOME/.cache/fleetkit-osrm}/$VERSION"
BIN="$HOME_DIR/osrm/bin"

install() {
  [ -x "$BIN/osrm-routed" ] && return
  mkdir -p "$HOME_DIR"
  local wheel_dir
  wheel_dir=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_28_x86_64 --dest "$wheel_dir" "osrm-bindings==$VERSION" >&2
  python3 - "$wheel_dir" "$HOME_DIR" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/osrm_bindings-*.whl")[0]
with zipfile.ZipFile(wheel) as archive:
    archive.extractall(sys.argv[2])
PY
  chmod +x "$BIN"/*
  rm -rf "$wheel_dir"
}

case "${1:-}" in
  bin)
    install
    echo "$BIN" ;;
  start)
    pbf=$(readlink -f "${2:?usage: dev/osrm.sh start PBF [PORT]}")
    port="${3:-5000}"
    install
    prepared="$HOME_DIR/prepared/$(sha256sum "$pbf" | cut -c1-16)"
    name="$prepared/$(basename "$pbf" .osm.pbf)"
    if [ ! -f "$name.osrm.hsgr" ]; then
      mkdir -p "$prepared"
      cp "$pbf" "$name.osm.pbf"
      "$BIN/osrm-extract" -p "$HOME_DIR/osrm/share/profiles/car.lua" "$name.osm.pbf" >"$prepared/extract.log" 2>&1
      "$BIN/osrm-contract" "$name.osrm" >"$prepared/contract.log" 2>&1
    fi
    # A server left on the port (an interrupted run's) would answer for this extract.
    if curl -s -o /dev/null "http://127.0.0.1:$port/"; then
      echo "port $port already answers (an osrm-routed left running?): dev/osrm.sh stop $port, or stop it by hand" >&2
      exit 1
    fi
    "$BIN/osrm-routed" --algorithm ch -i 127.0.0.1 -p "$port" "$name.osrm" >"$prepared/routed-$port.log" 2>&1 &
    routed=$!
    echo $routed >"$HOME_DIR/routed-$port.pid"
    for _ in $(seq 200); do
      kill -0 $routed 2>/dev/null || break
      if curl -s -o /dev/null "http://127.0.0.1:$port/nearest/v1/driving/0,0"; then
        echo "http://127.0.0.1:$port"
        exit 0
      fi
      sleep 0.1
    done
    echo "osrm-routed did not start on port $port: see $prepared/routed-$port.log" >&2
    exit 1 ;;
  stop)
    pid_file="$HOME_DIR/routed-${2:-5000}.pid"
    if [ -f "$pid_file" ]; then kill "$(cat "$pid_file")" 2>/dev/null || true; rm -f "$pid_file"; fi ;;
  *)
    sed -n '2,9p' "$0" >&2
    exit 2 ;;
esac
