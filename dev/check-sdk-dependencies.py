#!/usr/bin/env python3
"""Fails when a client SDK links server code.

Reads `swift package describe --type json` and follows every target and product dependency of
the client libraries (FleetDriver, FleetConsumer, FleetLocation, FleetRideStatusClient,
FleetClient). An app that adds one of them must not compile the routing engine, the OSM
reader, a store, SQLite, PostgreSQL or fleetd's server. Prints each SDK's closure.

    dev/check-sdk-dependencies.py            (from the repository's root, or anywhere in it)
    dev/check-sdk-dependencies.py FILE.json  (a saved `swift package describe --type json`)
"""
import json
import os
import re
import subprocess
import sys

SDKS = ["FleetDriver", "FleetConsumer", "FleetLocation", "FleetRideStatusClient", "FleetClient"]
# Server code: the routing engine and its OSM reader, the stores and their databases, the server,
# and the server-side engines (dispatch, trip progress, geocoding, tiles).
FORBIDDEN = re.compile(
    r"^(FleetRouting|OSMProto|CZlib|GRDB|PostgresNIO|FleetServer|FleetStore\w*|FleetDispatch|FleetProgress"
    r"|FleetGeocoding|FleetMap|Hummingbird\w*|FleetDemo|FleetSimulator|FleetGRPCTransport)$"
)


def describe():
    if len(sys.argv) > 1:
        with open(sys.argv[1]) as f:
            return json.load(f)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run(
        ["swift", "package", "describe", "--type", "json"], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out)


def closure(targets, name):
    seen = set()
    stack = [name]
    while stack:
        target = targets.get(stack.pop(), {})
        for dependency in target.get("target_dependencies", []) + target.get("product_dependencies", []):
            if dependency not in seen:
                seen.add(dependency)
                stack.append(dependency)
    return seen


def main():
    targets = {t["name"]: t for t in describe()["targets"]}
    failed = False
    for sdk in SDKS:
        if sdk not in targets:
            print(f"{sdk}: no such target")
            failed = True
            continue
        linked = closure(targets, sdk)
        bad = sorted(x for x in linked if FORBIDDEN.match(x))
        print(f"{sdk} links: {', '.join(sorted(linked))}")
        if bad:
            print(f"  FAIL: {sdk} links server code: {', '.join(bad)}")
            failed = True
    if failed:
        sys.exit(1)
    print("ok: no client SDK links server code")


main()
