#!/usr/bin/env python3
"""Checks the routing rule fixtures (Tests/FleetRoutingTests/Rules/*.fixture) against OSRM.

Each fixture states what routes across a drawn map must do; FleetKit's tests hold FleetKit to
it. This script builds the same map as an OSM file, prepares it with OSRM's car profile (the
binaries dev/osrm.sh installs), asks OSRM the same routes and reports where OSRM
answers otherwise, so that a fixture states OSRM's behaviour and not only FleetKit's.

A fixture where FleetKit differs from OSRM on purpose says so on a line `# osrm: differs ...`;
its mismatches are reported as expected.

    dev/check-rules-with-osrm.py [--show] [NAME...]   (default: every fixture; --show prints
                                                       OSRM's steps for every route)
"""
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from xml.sax.saxutils import quoteattr

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES = os.path.join(ROOT, "Tests/FleetRoutingTests/Rules")
PEER = os.path.join(ROOT, "dev", "osrm.sh")
SHOW = "--show" in sys.argv[1:]
EARTH_RADIUS = 6_372_797.560856  # FleetCore's LatLng.earthRadius, as MapFixture uses it


def words(text):
    result, current, quoted = [], "", False
    for c in text:
        if c == '"':
            quoted = not quoted
        elif c == " " and not quoted:
            if current:
                result.append(current)
            current = ""
        else:
            current += c
    if current:
        result.append(current)
    return result


def tags_of(items):
    return dict(item.split("=", 1) for item in items)


def parse(path):
    fixture = {"origin": (43.7, 7.4), "grid": 25.0, "map": [], "ways": [], "nodes": {}, "restrictions": [],
               "routes": [], "differs": False}
    section = ""
    for number, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
        stripped = line.strip()
        if stripped.startswith("#"):
            if stripped.lstrip("# ").startswith("osrm: differs"):
                fixture["differs"] = True
            continue
        if not line.startswith(" ") and ":" in stripped:
            key, value = stripped.split(":", 1)
            value = value.strip()
            if key == "origin":
                fixture["origin"] = tuple(float(v) for v in value.split(","))
            elif key == "grid":
                fixture["grid"] = float(value)
            else:
                section = key
            continue
        if section == "map":
            fixture["map"].append(line)
            continue
        if not stripped:
            continue
        w = words(stripped)
        if section == "ways":
            fixture["ways"].append((w[0], tags_of(w[1:])))
        elif section == "nodes":
            fixture["nodes"][w[0]] = tags_of(w[1:])
        elif section == "restrictions":
            fixture["restrictions"].append((w[0], w[1].split(","), w[2], tags_of(w[3:])))
        elif section == "routes":
            points, expected = stripped.split(":", 1)
            fixture["routes"].append((number, stripped, points.split(), words(expected)))
    drawing = fixture["map"]
    while drawing and not drawing[-1].strip():
        drawing.pop()
    indent = min((len(l) - len(l.lstrip(" ")) for l in drawing if l.strip()), default=0)
    lat0, lon0 = fixture["origin"]
    per_metre = 1 / (EARTH_RADIUS * math.pi / 180)
    locations = {}
    for row, line in enumerate(l[indent:] for l in drawing):
        for column, c in enumerate(line):
            if c.isalnum():
                locations[c] = (lat0 - row * fixture["grid"] * per_metre,
                                lon0 + column * fixture["grid"] * per_metre / math.cos(lat0 * math.pi / 180))
    fixture["locations"] = locations
    return fixture


def osm_xml(fixture):
    out = ["<?xml version='1.0' encoding='UTF-8'?>", "<osm version='0.6' generator='FleetKit fixture'>"]
    for c, (lat, lon) in sorted(fixture["locations"].items()):
        if not c.isalpha():
            continue
        tags = fixture["nodes"].get(c, {})
        attrs = "id='%d' version='1' lat='%.9f' lon='%.9f'" % (ord(c), lat, lon)
        if tags:
            out.append("<node %s>" % attrs)
            out += ["<tag k=%s v=%s/>" % (quoteattr(k), quoteattr(v)) for k, v in sorted(tags.items())]
            out.append("</node>")
        else:
            out.append("<node %s/>" % attrs)
    way_ids = {}
    for i, (nodes, tags) in enumerate(fixture["ways"], 1):
        way_ids[nodes] = i
        out.append("<way id='%d' version='1'>" % i)
        out += ["<nd ref='%d'/>" % ord(c) for c in nodes]
        out += ["<tag k=%s v=%s/>" % (quoteattr(k), quoteattr(v)) for k, v in sorted(tags.items())]
        out.append("</way>")
    for i, (source, via, target, tags) in enumerate(fixture["restrictions"], 1):
        out.append("<relation id='%d' version='1'>" % i)
        out.append("<member type='way' ref='%d' role='from'/>" % way_ids[source])
        if len(via) == 1 and len(via[0]) == 1 and via[0] not in way_ids:
            out.append("<member type='node' ref='%d' role='via'/>" % ord(via[0]))
        else:
            out += ["<member type='way' ref='%d' role='via'/>" % way_ids[v] for v in via]
        out.append("<member type='way' ref='%d' role='to'/>" % way_ids[target])
        tags = dict(tags, type="restriction")
        out += ["<tag k=%s v=%s/>" % (quoteattr(k), quoteattr(v)) for k, v in sorted(tags.items())]
        out.append("</relation>")
    out.append("</osm>")
    return "\n".join(out) + "\n"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ways_driven(fixture, nodes):
    ids = {ord(c): c for c in fixture["locations"]}
    chars = [ids.get(n, "?") for n in nodes]
    ways = []
    for a, b in zip(chars, chars[1:]):
        way = next((w for w, _ in fixture["ways"] if any({w[i], w[i + 1]} == {a, b} for i in range(len(w) - 1))),
                   "?")
        if not ways or ways[-1] != way:
            ways.append(way)
    return ways


def check(name, osrm_bin, work):
    fixture = parse(os.path.join(RULES, name + ".fixture"))
    base = os.path.join(work, name)
    with open(base + ".osm", "w", encoding="utf-8") as f:
        f.write(osm_xml(fixture))
    profile = os.path.join(osrm_bin, "share", "profiles", "car.lua")
    for command in (["osrm-extract", "-p", profile, base + ".osm"], ["osrm-contract", base + ".osrm"]):
        run = subprocess.run([os.path.join(osrm_bin, "bin", command[0])] + command[1:], capture_output=True, text=True)
        if run.returncode != 0:
            return ["OSRM could not prepare the map: " + run.stdout[-400:] + run.stderr[-400:]]
    port = free_port()
    server = subprocess.Popen([os.path.join(osrm_bin, "bin", "osrm-routed"), "--algorithm", "ch", "-i", "127.0.0.1",
                               "-p", str(port), base + ".osrm"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    problems = []
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        for number, text, points, expected in fixture["routes"]:
            coords = ";".join("%.9f,%.9f" % (fixture["locations"][p][1], fixture["locations"][p][0]) for p in points)
            url = "http://127.0.0.1:%d/route/v1/driving/%s?overview=false&steps=true&annotations=nodes,distance" % (port, coords)
            try:
                answer = json.load(urllib.request.urlopen(url))
            except urllib.error.HTTPError as error:
                answer = json.load(error)
            found = answer.get("code") == "Ok"
            if "none" in expected:
                if found:
                    problems.append("line %d (%s): OSRM finds a route of %.0f m" % (
                        number, text, answer["routes"][0]["distance"]))
                continue
            if not found:
                problems.append("line %d (%s): OSRM answers %s" % (number, text, answer.get("code")))
                continue
            route = answer["routes"][0]
            if SHOW:
                print("  %s: %s" % (text, " | ".join(
                    "%s %s %s%s%s %d>%d %s" % (step["maneuver"]["type"], step["maneuver"].get("modifier", ""), step["name"],
                                          " exit=%s" % step["maneuver"]["exit"] if "exit" in step["maneuver"] else "",
                                          " rotary=%s" % step["rotary_name"] if "rotary_name" in step else "",
                                          step["maneuver"]["bearing_before"], step["maneuver"]["bearing_after"],
                                          [(i["bearings"], i.get("in"), i.get("out")) for i in step["intersections"]])
                    for leg in route["legs"] for step in leg["steps"])))
            # The nodes driven; a waypoint on a node leaves a segment of no length at a leg's end.
            nodes = []
            for leg in route["legs"]:
                leg_nodes = leg["annotation"]["nodes"]
                lengths = leg["annotation"]["distance"]
                start, end = 0, len(leg_nodes)
                while end - start > 2 and lengths[start] < 0.01:
                    start += 1
                while end - start > 2 and lengths[end - 2] < 0.01:
                    end -= 1
                for n in leg_nodes[start:end]:
                    if not nodes or nodes[-1] != n:
                        nodes.append(n)
            ways = ways_driven(fixture, nodes)
            steps = [step for leg in route["legs"] for step in leg["steps"]]

            def turn(step):
                kind, modifier = step["maneuver"]["type"], step["maneuver"].get("modifier")
                return kind if kind in ("depart", "arrive") or not modifier else kind + " " + modifier

            def lanes(step):
                return "|".join(
                    " ".join("%s:%s" % (";".join(lane["indications"]), "true" if lane["valid"] else "false")
                             for lane in intersection.get("lanes", []))
                    for intersection in step["intersections"])

            # Each per-step expectation: how a difference is said, and OSRM's values.
            per_step = {
                "turns": (" says", [turn(step) for step in steps]),
                "lanes": ("'s lanes", [lanes(step) for step in steps]),
                "bearings": ("'s bearings", ["%d>%d" % (step["maneuver"]["bearing_before"],
                                                        step["maneuver"]["bearing_after"]) for step in steps]),
                "intersections": ("'s intersections", [str(len(step["intersections"])) for step in steps]),
                "exits": ("'s exits", [str(step["maneuver"].get("exit", "")) for step in steps]),
                "names": ("'s names", [step["name"] for step in steps]),
                "rotary_names": ("'s rotary names", [step.get("rotary_name", "") for step in steps]),
                "junction_refs": ("'s exits (junction:ref)", [step.get("exits", "") for step in steps]),
                "pronunciations": ("'s pronunciations", [step.get("pronunciation", "") for step in steps]),
            }
            for item in expected:
                key, value = item.split("=", 1)
                if key == "ways" and ways != value.split(","):
                    problems.append("line %d (%s): OSRM drives %s" % (number, text, ",".join(ways)))
                elif key == "start" and ways[:1] != [value]:
                    problems.append("line %d (%s): OSRM starts on %s" % (number, text, ways[:1]))
                elif key == "end" and ways[-1:] != [value]:
                    problems.append("line %d (%s): OSRM ends on %s" % (number, text, ways[-1:]))
                elif key in per_step and per_step[key][1] != value.split(","):
                    problems.append("line %d (%s): OSRM%s %s" % (number, text, per_step[key][0], ",".join(per_step[key][1])))
                elif key in ("distance", "duration"):
                    figure, _, tolerance = value.partition("±")
                    tolerance = float(tolerance) if tolerance else (1 if key == "distance" else 0.5)
                    if abs(route[key] - float(figure)) > tolerance:
                        problems.append("line %d (%s): OSRM %s %.1f" % (number, text, key, route[key]))
    finally:
        server.terminate()
        server.wait()
    return problems, fixture["differs"]


def main():
    osrm_bin = os.path.dirname(subprocess.run([PEER, "bin"], capture_output=True, text=True, check=True).stdout.strip())
    names = [a for a in sys.argv[1:] if a != "--show"] or sorted(f[:-len(".fixture")] for f in os.listdir(RULES) if f.endswith(".fixture"))
    work = tempfile.mkdtemp()
    failed = 0
    try:
        for name in names:
            result = check(name, osrm_bin, work)
            problems, differs = result if isinstance(result, tuple) else (result, False)
            if not problems:
                print("agrees   %s" % name)
            elif differs:
                print("differs  %s (on purpose, see the fixture)" % name)
                for p in problems:
                    print("           " + p)
            else:
                failed += 1
                print("DISAGREES %s" % name)
                for p in problems:
                    print("           " + p)
    finally:
        shutil.rmtree(work)
    sys.exit(1 if failed else 0)


main()
