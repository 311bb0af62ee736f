"""fleetd's web pages in a real browser: headless Chromium (Debian's chromium and
chromium-driver) through Selenium, against `fleetd demo` (fleetd, its dispatcher, simulated
drivers and riders) on loopback. Asserts on page state, not pixels; saves screenshots.

Run by `swift test` (FleetServerTests/BrowserTests.swift) with the system's python3:
    FLEETD_BINARY=.build/debug/fleetd ARTIFACTS=.build/browser-artifacts python3 -m unittest -v Browser/test_pages.py
"""

import json
import math
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.common.exceptions import StaleElementReferenceException

FLEETD = os.environ.get("FLEETD_BINARY", ".build/debug/fleetd")
ARTIFACTS = os.environ.get("ARTIFACTS", ".build/browser-artifacts")
VEHICLES = 8
# An app's own web server, on an origin of its own that the demo is told to trust
# (--cors-origin), and another origin it is not told of.
APP_PORT, STRANGER_PORT = None, None


def free_ports(count):
    """Ports free now, all different: each stays bound until all are found (the system can hand
    out the same free port twice in a row)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def free_port():
    return free_ports(1)[0]


def wait_for(what, predicate, timeout, interval=0.25):
    """predicate's first truthy value within timeout seconds, or a failure naming `what`."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last: {last!r})")


def metres(a, b):
    x = math.radians(b[1] - a[1]) * math.cos(math.radians((a[0] + b[0]) / 2))
    y = math.radians(b[0] - a[0])
    return math.hypot(x, y) * 6371000


def along(path, p, after=None):
    """How far along `path` ([[lat, lng], …]) the point matching `p` is, and how far off it p is.

    With `after` (where the previous sample matched), the match is followed in order: the nearest
    point no more than 50 m before `after`, so that a route passing close to itself (a hairpin) does
    not match a later sample to an earlier pass. Only when nothing from there on is within 40 m of
    `p` does the nearest point anywhere count, so a real jump back is still seen as one."""
    start = -math.inf if after is None else after - 50
    nearest = (0.0, metres(p, path[0]))
    ahead = nearest if start <= 0 else (0.0, math.inf)
    walked = 0.0
    k = math.cos(math.radians(p[0]))  # project in a local flat frame around p
    px, py = p[1] * k, p[0]
    for a, b in zip(path, path[1:]):
        seg = metres(a, b)
        ax, ay, bx, by = a[1] * k, a[0], b[1] * k, b[0]
        dx, dy = bx - ax, by - ay
        t = 0.0 if dx == dy == 0 else max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))

        def point(t):
            q = [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t]
            return (walked + seg * t, metres(p, q))

        candidate = point(t)
        if candidate[1] < nearest[1]:
            nearest = candidate
        if walked + seg >= start:
            if candidate[0] < start:  # the segment's part from `start` on
                candidate = point((start - walked) / seg)
            if candidate[1] < ahead[1]:
                ahead = candidate
        walked += seg
    return ahead if ahead[1] <= 40 or nearest[1] > 40 else nearest


class Demo:
    """`fleetd demo` as a process, restartable on the same ports and data directory."""

    def __init__(self, cors_origins=()):
        self.dir = tempfile.mkdtemp(prefix="fleetkit-browser-")
        self.grpc, self.http = free_ports(2)
        self.cors = [argument for origin in cors_origins for argument in ("--cors-origin", origin)]
        self.process = None
        self.output = []

    def start(self):
        log = open(os.path.join(self.dir, "demo.log"), "a")
        # Riders enough to keep the cars busy, not to outrun them: at 4 a minute (with the
        # tests' own rides, some pooled) eight cars fell behind, ten rides waited, and a ride a
        # test booked waited its turn for over two minutes.
        self.process = subprocess.Popen(
            [FLEETD, "demo", "--data-dir", os.path.join(self.dir, "data"), "--grpc-port", str(self.grpc),
             "--http-port", str(self.http), "--vehicles", str(VEHICLES), "--riders-per-minute", "3",
             "--speedup", "6", "--log-level", "info", "--deliveries", "2", "--parcels", "4"] + self.cors,
            stdout=subprocess.PIPE, stderr=log, text=True)
        lines = []
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise AssertionError("fleetd demo ended before printing its pages:\n" + "".join(lines) +
                                     open(os.path.join(self.dir, "demo.log")).read())
            lines.append(line)
            match = re.search(r"Fleet page:\s+(\S+)", line)
            if match:
                self.fleet_url = match.group(1)
                break
        # Keep reading, so that the demo never blocks on a full pipe.
        threading.Thread(target=self._drain, args=(self.process,), daemon=True).start()
        wait_for("fleetd's HTTP port", lambda: self._healthy(), 60)

    def _drain(self, process):
        for line in process.stdout:
            self.output.append(line)

    def _healthy(self):
        try:
            return urllib.request.urlopen(self.url("/healthz"), timeout=2).status == 200
        except OSError:
            return False

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def url(self, path):
        return f"http://127.0.0.1:{self.http}{path}"

    def log_tail(self, lines=40):
        with open(os.path.join(self.dir, "demo.log")) as log:
            return "".join(self.output[-lines:]) + "".join(log.readlines()[-lines:])

    def key(self, role):
        return os.path.join(self.dir, "data", "demo-keys", f"demo-{role}.json")

    def token(self, role, trip=None, ttl=3600):
        arguments = [FLEETD, "token", "--key", self.key(role), "--ttl", str(ttl)]
        if trip:
            arguments += ["--trip", trip]
        return subprocess.run(arguments, check=True, capture_output=True, text=True).stdout.strip()

    def call(self, method, path, body=None):
        request = urllib.request.Request(
            self.url(path), method=method, data=json.dumps(body).encode() if body is not None else None,
            headers={"authorization": "Bearer " + self.token("server"), "content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)


demo = None
browser = None


APP_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>An app's own page</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="{fleetd}/web/leaflet/leaflet.css">
<script src="{fleetd}/web/leaflet/leaflet.js"></script>
<script src="{fleetd}/web/fleetkit/journey-sharing.js"></script></head>
<body><div id="map" style="height: 500px"></div>
<script>
  // The rider's token would come from the app's backend; here it comes in the fragment.
  const params = new URLSearchParams(location.hash.slice(1));
  const js = fleetkit.journeySharing;
  window.app = {{updates: 0, errors: []}};
  const provider = new js.FleetEngineTripLocationProvider({{
    providerId: 'demo', tripId: params.get('trip'), serverUrl: '{fleetd}',
    authTokenFetcher: () => ({{token: params.get('token'), expiresInSeconds: 3600}}),
  }});
  provider.addListener('update', ({{trip}}) => {{ window.app.updates += 1; window.app.trip = trip; }});
  provider.addListener('error', ({{error}}) => window.app.errors.push(error.status + ': ' + error.message));
  window.app.provider = provider;
  window.app.mapView = new js.JourneySharingMapView({{
    element: document.getElementById('map'), locationProviders: [provider], serverUrl: '{fleetd}'}});
</script></body></html>
"""


def serve_app(port, folder):
    """A static web server for the app's page on its own origin."""
    import functools
    import http.server

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(Quiet, directory=folder))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


app_servers = []


def setUpModule():
    global demo, browser, APP_PORT, STRANGER_PORT
    os.makedirs(ARTIFACTS, exist_ok=True)
    APP_PORT, STRANGER_PORT = free_ports(2)
    demo = Demo(cors_origins=[f"http://127.0.0.1:{APP_PORT}"])
    demo.start()
    folder = tempfile.mkdtemp(prefix="fleetkit-app-")
    with open(os.path.join(folder, "ride.html"), "w") as page:
        page.write(APP_PAGE.format(fleetd=demo.url("")))
    app_servers.extend(serve_app(port, folder) for port in (APP_PORT, STRANGER_PORT))
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1200,800"]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    browser.set_page_load_timeout(30)


def tearDownModule():
    for server in app_servers:
        server.shutdown()
    if browser:
        browser.quit()
    if demo:
        demo.stop()


def screenshot(name):
    browser.save_screenshot(os.path.join(ARTIFACTS, name))


def console_errors():
    return [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def js(script):
    return browser.execute_script(script)


def drawn_route():
    """The sharing page's active and remaining polylines as drawn, in drawing order."""
    return js("""
      const v = window.fleetkitShare.mapView;
      const paths = Array.from(v.map.getPanes().overlayPane.querySelectorAll('path'));
      const lines = (group) => group.getLayers().map((l) => ({
        points: l.getLatLngs().map((p) => [p.lat, p.lng]), order: paths.indexOf(l.getElement())}));
      return {active: lines(v.layers.active), remaining: lines(v.layers.remaining)};
    """)


def check_drawn_route(test, route):
    """The active polyline is drawn over the remaining ones and the route has no gaps."""
    active, remaining = route["active"], route["remaining"]
    if not active or not remaining:
        return
    test.assertLess(max(l["order"] for l in remaining), min(l["order"] for l in active),
                    "a remaining polyline is drawn over the active one")
    test.assertLess(metres(active[-1]["points"][-1], remaining[0]["points"][0]), 1,
                    "the remaining route does not start where the active one ends")


def book_assigned_ride(ride):
    """Books a ride from Fontvieille to the Larvotto (about 3 km) and waits for its vehicle."""
    demo.call("POST", f"/fleetkit/v1/providers/demo/rides?rideId={ride}", {
        "pickupPoint": {"point": {"latitude": 43.7317, "longitude": 7.4172}},
        "dropoffPoint": {"point": {"latitude": 43.7456, "longitude": 7.4336}},
    })
    wait_for("the ride's vehicle",
             lambda: demo.call("GET", f"/fleetkit/v1/providers/demo/rides/{ride}")["state"] == "ASSIGNED", 120)
    return ride


# The rides' cars on the fleet page's map (the demo's delivery vans have markers of their own).
CAR_MARKERS = "return [...window.fleetkitFleet.markers.keys()].filter((k) => !k.startsWith('delivery:')).length"


def tracking_state():
    """The tracking page as its recipient sees it."""
    return js("""
      const v = window.fleetkitTrack && window.fleetkitTrack.view;
      const ll = (m) => m && v.map.hasLayer(m) ? [m.getLatLng().lat, m.getLatLng().lng] : null;
      return {banner: document.getElementById('banner').textContent,
              status: document.getElementById('banner').dataset.status,
              stops: document.getElementById('stops').dataset.count,
              meters: document.getElementById('distance').dataset.meters,
              seconds: document.getElementById('eta').dataset.seconds,
              message: document.getElementById('message').hidden ? '' : document.getElementById('message').textContent,
              vehicle: v ? ll(v.vehicle) : null, destination: v ? ll(v.destination) : null,
              route: v ? v.route.getLatLngs().length : 0};
    """)


class T1FleetPage(unittest.TestCase):
    def test_fleet_page_shows_filters_and_clusters_the_fleet(self):
        console_errors()  # only this page's from here on
        browser.set_window_size(1200, 800)
        browser.get(demo.fleet_url)
        count = lambda: js("const e = document.getElementById('vehicle-count'); return e && Number(e.dataset.count)")
        wait_for(f"{VEHICLES} vehicles on the fleet page", lambda: count() == VEHICLES, 60)
        self.assertEqual(js(CAR_MARKERS), VEHICLES)
        self.assertEqual(len(browser.find_elements(By.CSS_SELECTOR, "#vehicles tr")), VEHICLES)
        # The basemap: tiles drawn by fleetd, loaded.
        wait_for("map tiles", lambda: js("return document.querySelectorAll('img.leaflet-tile-loaded').length") >= 4, 30)
        tile = js("return document.querySelector('img.leaflet-tile-loaded').src")
        with urllib.request.urlopen(tile) as response:
            self.assertEqual(response.headers["content-type"], "image/svg+xml")
            self.assertIn("<path", response.read().decode())
        self.assertIn("OpenStreetMap", browser.find_element(By.CSS_SELECTOR, ".leaflet-control-attribution").text)
        # The dispatch queue, read with the server token.
        wait_for("the dispatch queue", lambda: browser.find_elements(By.CSS_SELECTOR, "#queue [data-state=ASSIGNED]"), 30)
        screenshot("fleet.png")
        # A filter in ListVehicles' syntax: the XL cars only (every fourth), as fleetd itself counts them.
        expected = len(demo.call("GET", "/v1/providers/demo/vehicles?vehicleTypeCategories=AUTO&pageSize=100&filter="
                                 + urllib.parse.quote('attributes.class = "xl"'))["vehicles"])
        self.assertEqual(expected, VEHICLES // 4)
        box = browser.find_element(By.ID, "filter")
        box.send_keys('attributes.class = "xl"', Keys.ENTER)
        wait_for("the filtered count", lambda: count() == expected, 20)
        self.assertEqual(js(CAR_MARKERS), expected)
        screenshot("fleet-filtered.png")
        # A filter fleetd refuses: its message under the box.
        box.clear()
        box.send_keys("attributes.class = ", Keys.ENTER)
        message = wait_for("the filter's error", lambda: browser.find_element(By.ID, "filter-error").text, 20)
        self.assertIn("filter", message)
        box.clear()
        box.send_keys(Keys.ENTER)
        wait_for("every vehicle again", lambda: count() == VEHICLES, 20)
        # A click on a vehicle shows its trips and route.
        def click_first_vehicle():
            # The list is redrawn with each update: a row found just before one may be gone.
            try:
                browser.find_element(By.CSS_SELECTOR, "#vehicles tr").click()
                return True
            except StaleElementReferenceException:
                return False
        wait_for("a click on a vehicle row", click_first_vehicle, 10)
        details = wait_for("the vehicle's details", lambda: browser.find_element(By.ID, "details").text, 10)
        self.assertIn("car-", details)
        # The refused filter's 400 is the only error the page may log.
        errors = [e for e in console_errors() if not ("/vehicles?" in e["message"] and "status of 400" in e["message"])]
        self.assertEqual(errors, [], "the fleet page logged errors")


class T11FleetPageReach(unittest.TestCase):
    """The fleet page's reach: the areas a car gets to from a point in 5 and 10 minutes (fleetd's
    isochrones) drawn on the map, and the cars inside each listed, as a check of the same
    GeoJSON in Python finds them."""

    FROM = (43.7384, 7.4246)

    def test_reach_from_a_point_draws_its_areas_and_lists_the_cars_inside(self):
        console_errors()
        # What fleetd answers for the point, nearest contour first.
        with urllib.request.urlopen(demo.url(
                f"/isochrone/v1/driving/{self.FROM[1]},{self.FROM[0]}?contours_minutes=5,10&polygons=true")) as response:
            areas = json.load(response)["features"][::-1]
        self.assertEqual([f["properties"]["contour"] for f in areas], [5, 10])
        browser.get("about:blank")
        browser.get(demo.fleet_url)
        wait_for(f"{VEHICLES} vehicles on the fleet page", lambda: js(
            "const e = document.getElementById('vehicle-count'); return e && Number(e.dataset.count)") == VEHICLES, 60)
        # A click on the map with the reach picker on: the areas from there.
        browser.find_element(By.ID, "pick-reach").click()
        element = browser.find_element(By.ID, "map")
        width, height = element.size["width"], element.size["height"]
        for nudge in range(6):
            x, y = js(f"const p = window.fleetkitFleet.map.latLngToContainerPoint([{self.FROM[0]}, {self.FROM[1] + nudge * 0.0004}]);"
                      " return [p.x, p.y];")
            ActionChains(browser).move_to_element_with_offset(element, x - width / 2, y - height / 2).click().perform()
            try:
                wait_for("the reach from the click", lambda: js("return document.getElementById('reach').dataset.counts"), 5)
                break
            except AssertionError:
                continue
        self.assertTrue(js("return document.getElementById('reach').dataset.counts"), "no click drew the reach")
        # Both areas drawn, in the colours fleetd gave them.
        colours = js("return Array.from(document.querySelectorAll('.leaflet-overlay-pane path'))"
                     ".map((p) => p.getAttribute('stroke'))")
        self.assertEqual(len([c for c in colours if c in [f["properties"]["color"] for f in areas]]), 2, colours)
        # The same from a typed point, checked against fleetd's GeoJSON: each car listed
        # under the nearest contour it is inside, and no car inside left out.
        field = browser.find_element(By.ID, "reach-from")
        field.clear()
        field.send_keys(f"{self.FROM[0]},{self.FROM[1]}")
        browser.find_element(By.ID, "get-reach").click()
        wait_for("the typed point's reach", lambda: js("return document.getElementById('reach-from').value") ==
                 f"{self.FROM[0]:.5f},{self.FROM[1]:.5f}", 10)

        def inside(feature, lat, lng):
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

        def listed_and_expected():
            # One read of the page: its rows and the positions it drew them from.
            rows, positions = js("""
              const rows = Array.from(document.querySelectorAll('#reach-vehicles tr')).map((r) => [r.dataset.vehicle, Number(r.dataset.minutes)]);
              const positions = window.fleetkitFleet.vehicles().map((v) => [v.name.split('/').pop(),
                v.lastLocation && v.lastLocation.location ? [v.lastLocation.location.latitude, v.lastLocation.location.longitude] : null]);
              return [rows, positions];""")
            expected = []
            for vehicle, position in positions:
                if not position:
                    continue
                for feature in areas:
                    if inside(feature, position[0], position[1]):
                        expected.append([vehicle, feature["properties"]["contour"]])
                        break
            return sorted(map(tuple, rows)), sorted(map(tuple, expected))
        rows, expected = wait_for("the page's list as the GeoJSON has it", lambda: (lambda r: r if r[0] == r[1] else None)(
            listed_and_expected()), 20)
        # Monaco is small: from its centre some of the demo's cars are within 10 minutes.
        self.assertGreater(len(rows), 0)
        counts = js("return document.getElementById('reach').dataset.counts").split(",")
        self.assertEqual([int(c) for c in counts], [sum(1 for r in rows if r[1] == m) for m in (5, 10)])
        screenshot("fleet-reach.png")
        # Minutes fleetd refuses: its message, under the form.
        minutes = browser.find_element(By.ID, "reach-minutes")
        minutes.clear()
        minutes.send_keys("10,5")
        browser.find_element(By.ID, "get-reach").click()
        message = wait_for("the reach's error", lambda: browser.find_element(By.ID, "reach-error").text, 10)
        self.assertIn("contours_minutes", message)
        errors = [e for e in console_errors() if "/isochrone/" not in e["message"]]
        self.assertEqual(errors, [], "the fleet page logged errors")


class T2SharingPage(unittest.TestCase):
    def test_sharing_page_follows_a_ride_to_its_end_across_a_restart(self):
        ride = book_assigned_ride("browser-ride")
        browser.set_window_size(390, 844)  # a phone
        console_errors()  # only this page's from here on
        browser.get(demo.url(f"/share/trips/{ride}#token=" + demo.token("consumer", trip=ride)))
        status = lambda: js("return document.getElementById('banner').dataset.status")
        wait_for("the trip on the page", lambda: status() not in ("", None), 30)
        routes = {}          # per status: the first route the page showed for that leg
        progress = {}        # per status: [(along the route, ETA seconds, metres)]
        pickup_marker = {}   # per status: whether the pickup marker was on the map
        restarted = False
        saw_outage = False
        deadline = time.monotonic() + 420
        while time.monotonic() < deadline:
            state = js("""
              const s = window.fleetkitShare, trip = s.provider.trip;
              // The leg's whole way: a car finishing another ride first passes that ride's
              // drop-off (another trip's waypoint) before this trip's stop.
              const legPath = (trip) => {
                const path = [];
                for (const waypoint of (trip && trip.remainingWaypoints) || []) {
                  path.push(...fleetkit.journeySharing.waypointPath(waypoint));
                  if (waypoint.tripId === %s) return path;
                }
                return null;
              };
              const eta = document.getElementById('eta').dataset.seconds;
              const distance = document.getElementById('distance').dataset.meters;
              const message = document.getElementById('message');
              return {status: document.getElementById('banner').dataset.status,
                      position: s.mapView.vehiclePosition,
                      path: legPath(trip),
                      eta: eta === undefined ? null : Number(eta),
                      distance: distance === undefined ? null : Number(distance),
                      pickup: !!s.mapView.stopMarkers.pickup,
                      message: message.hidden ? null : message.dataset.kind};
            """ % json.dumps(ride))
            leg = state["status"]
            if leg == "ERROR":
                self.fail("the sharing page shows an error: " + browser.find_element(By.ID, "message").text)
            check_drawn_route(self, drawn_route())
            pickup_marker.setdefault(leg, set()).add(state["pickup"])
            if state["path"] and len(state["path"]) > 1 and leg not in routes:
                routes[leg] = state["path"]
            if state["position"] and leg in routes:
                matched = [a for a, _, _ in progress.get(leg, []) if a[1] <= 40]
                after = matched[-1][0] if matched else None
                progress.setdefault(leg, []).append(
                    (along(routes[leg], state["position"], after), state["eta"], state["distance"]))
            if state["message"] == "transient":
                saw_outage = True
            if leg == "ENROUTE_TO_DROPOFF" and not restarted and len(progress.get(leg, [])) >= 6:
                screenshot("share-enroute.png")
                self.assertEqual(console_errors(), [], "the sharing page logged errors")
                # fleetd goes away mid-ride and comes back: the page must carry on by itself.
                demo.stop()
                wait_for("the page to notice the outage",
                         lambda: js("const m = document.getElementById('message'); return !m.hidden && m.dataset.kind === 'transient'"), 30)
                saw_outage = True
                screenshot("share-outage.png")
                demo.start()
                restarted = True
            if leg == "COMPLETE":
                break
            time.sleep(0.5)
        screenshot("share-complete.png")
        self.assertEqual(
            status(), "COMPLETE",
            f"the ride did not complete; legs seen: {sorted(progress)}; the demo's log ends:\n{demo.log_tail()}")
        self.assertTrue(restarted and saw_outage, "fleetd was not restarted mid-ride")
        self.assertIn("completed", browser.find_element(By.ID, "banner").text.lower())
        # The pickup marker: shown before the pickup, gone after it.
        self.assertEqual(pickup_marker.get("ENROUTE_TO_DROPOFF"), {False})
        self.assertEqual(pickup_marker.get("COMPLETE"), {False})
        if "ENROUTE_TO_PICKUP" in pickup_marker:
            self.assertEqual(pickup_marker["ENROUTE_TO_PICKUP"], {True})
        # The vehicle marker never moves backwards along a leg's route, and follows the driver.
        for leg, samples in progress.items():
            positions = [a for a, _, _ in samples if a[1] <= 40]
            for i, ((before, _), (after, _)) in enumerate(zip(positions, positions[1:])):
                # The samples around the step (metres along the leg's first route, metres off it),
                # so that a failure tells a marker joining a report off its route from one snapped back.
                around = [(round(a), round(o)) for a, o in positions[max(0, i - 4):i + 6]]
                self.assertGreaterEqual(
                    after, before - 3,
                    f"the vehicle marker moved backwards during {leg}: samples around it (along, off) {around}")
        dropoff = [s for s in progress["ENROUTE_TO_DROPOFF"] if s[1] is not None and s[2] is not None]
        self.assertGreater(len(dropoff), 5)
        self.assertGreater(dropoff[-1][0][0] - dropoff[0][0][0], 300, "the vehicle marker did not follow the driver")
        # ETA and distance fall along the way (small rises allowed: routes and speeds are re-estimated).
        samples = [(round(a[0]), eta, metres) for a, eta, metres in dropoff]
        self.assertLess(dropoff[-1][1], dropoff[0][1],
                        f"the ETA did not fall on the drop-off leg; (along, ETA, metres): {samples}; "
                        f"the demo's log ends:\n{demo.log_tail()}")
        self.assertLess(dropoff[-1][2], dropoff[0][2], f"the distance did not fall; (along, ETA, metres): {samples}")
        self.assertLessEqual(max(b[2] - a[2] for a, b in zip(dropoff, dropoff[1:])), 50,
                             f"the distance rose; (along, ETA, metres): {samples}; "
                             f"the demo's log ends:\n{demo.log_tail()}")
        # ... and as the car drives, not only at its end: the same distance over 600 m along
        # the leg is trip progress no longer following the car (a report every 2 s moves it
        # about 130 m at the demo's speed-up).
        frozen = max(max(a[0] for a, _, m in dropoff if m == metres) - min(a[0] for a, _, m in dropoff if m == metres)
                     for metres in {m for _, _, m in dropoff})
        self.assertLessEqual(frozen, 600, f"the distance stood still as the car drove on; (along, ETA, metres): {samples}")
        browser.set_window_size(1200, 800)


class T2bBackToBackRide(unittest.TestCase):
    def test_a_rider_whose_car_finishes_another_ride_first_sees_the_whole_way(self):
        def busy_car():
            vehicles = demo.call("GET", "/v1/providers/demo/vehicles?vehicleTypeCategories=AUTO&pageSize=100")
            for vehicle in vehicles.get("vehicles", []):
                trips = vehicle.get("currentTrips", [])
                if len(trips) == 1 and demo.call("GET", f"/v1/providers/demo/trips/{trips[0]}").get(
                        "tripStatus") == "ENROUTE_TO_DROPOFF":
                    return vehicle["name"].rsplit("/", 1)[-1]
            return None
        car = wait_for("a car carrying a rider", busy_car, 180, 1)
        ride = "browser-back-to-back"
        # The Casino square to Fontvieille, on the car that is still carrying someone else.
        demo.call("POST", f"/v1/providers/demo/trips?tripId={ride}", {
            "pickupPoint": {"point": {"latitude": 43.7395, "longitude": 7.4280}},
            "dropoffPoint": {"point": {"latitude": 43.7317, "longitude": 7.4172}},
            "vehicleId": car, "tripType": "EXCLUSIVE", "numberOfPassengers": 1})
        try:
            browser.set_window_size(390, 844)
            console_errors()
            browser.get(demo.url(f"/share/trips/{ride}#token=" + demo.token("consumer", trip=ride)))
            waypoints = wait_for("the other ride's drop-off before this one's stops", lambda: js("""
              const trip = window.fleetkitShare && window.fleetkitShare.provider.trip;
              const shown = trip && (trip.remainingWaypoints || []);
              return shown && shown.length === 3 ? shown.map((w) => [w.tripId || '', w.waypointType]) : null;
            """), 30)
            self.assertEqual(waypoints, [["", "DROP_OFF_WAYPOINT_TYPE"], [ride, "PICKUP_WAYPOINT_TYPE"],
                                         [ride, "DROP_OFF_WAYPOINT_TYPE"]])
            route = wait_for("the route drawn", lambda: (lambda r: r if r["active"] and len(r["remaining"]) == 2
                                                         else None)(drawn_route()), 20)
            check_drawn_route(self, route)
            # The dotted route leads to the pickup marker, then to the drop-off marker.
            pickup = js("const m = window.fleetkitShare.mapView.stopMarkers.pickup.getLatLng(); return [m.lat, m.lng]")
            dropoff = js("const m = window.fleetkitShare.mapView.stopMarkers.dropoff.getLatLng(); return [m.lat, m.lng]")
            self.assertLess(metres(route["remaining"][0]["points"][-1], pickup), 60)
            self.assertLess(metres(route["remaining"][1]["points"][0], route["remaining"][0]["points"][-1]), 1)
            self.assertLess(metres(route["remaining"][1]["points"][-1], dropoff), 60)
            screenshot("share-back-to-back.png")
            # A trip made with the trips API is no booked ride: the page's look for its fare is
            # answered 404, and it shows none.
            self.assertTrue(js("return document.getElementById('fare-row').hidden"))
            errors = [e for e in console_errors()
                      if not (f"/rides/{ride}" in e["message"] and "status of 404" in e["message"])]
            self.assertEqual(errors, [], "the sharing page logged errors")
        finally:
            demo.call("PUT", f"/v1/providers/demo/trips/{ride}?updateMask=tripStatus", {"tripStatus": "CANCELED"})
            browser.set_window_size(1200, 800)


class T3SharingPageErrors(unittest.TestCase):
    def message(self, path):
        browser.get("about:blank")
        browser.get(demo.url(path))
        return wait_for("an error message", lambda: js(
            "const m = document.getElementById('message'); return !m.hidden && m.textContent"), 20)

    def test_bad_expired_and_foreign_tokens_and_unknown_trips_say_so(self):
        self.assertIn("not valid", self.message("/share/trips/browser-ride#token=garbage"))
        self.assertIn("not valid", self.message("/share/trips/browser-ride"))
        expired = demo.token("consumer", trip="browser-ride", ttl=1)
        time.sleep(2)
        self.assertIn("expired", self.message("/share/trips/browser-ride#token=" + expired))
        self.assertIn("no such trip", self.message("/share/trips/nope#token=" + demo.token("consumer", trip="nope")))
        other = demo.token("consumer", trip="someone-elses")
        self.assertIn("not for this trip", self.message("/share/trips/browser-ride#token=" + other))
        screenshot("share-error.png")
        self.assertEqual(js("return document.getElementById('banner').dataset.status"), "ERROR")


class T5AnotherOrigin(unittest.TestCase):
    """An app's own page, on its own origin, follows a ride with the library served by fleetd."""

    def test_a_page_on_a_configured_origin_follows_a_ride_and_others_are_refused(self):
        ride = book_assigned_ride("cross-origin-ride")
        fragment = f"#trip={ride}&token=" + demo.token("consumer", trip=ride)
        console_errors()
        browser.get(f"http://127.0.0.1:{APP_PORT}/ride.html" + fragment)
        wait_for("the trip through fleetd's event stream", lambda: js(
            "return window.app.provider.isStreaming && window.app.updates > 0"), 60)
        # Assigned, the trip is NEW until its driver's app starts it.
        wait_for("the trip under way", lambda: js("return window.app.trip.tripStatus") in (
            "ENROUTE_TO_PICKUP", "ARRIVED_AT_PICKUP", "ENROUTE_TO_DROPOFF"), 60)
        trip = js("return window.app.trip")
        self.assertEqual(trip["vehicleId"], demo.call("GET", f"/fleetkit/v1/providers/demo/rides/{ride}")["vehicleId"])
        self.assertIn(trip["tripStatus"], ("ENROUTE_TO_PICKUP", "ARRIVED_AT_PICKUP", "ENROUTE_TO_DROPOFF"))
        wait_for("the vehicle on the app's map", lambda: js("return !!window.app.mapView.vehiclePosition"), 60)
        wait_for("the basemap's description", lambda: js(
            "return document.querySelectorAll('.leaflet-tile-loaded').length > 0"), 30)
        self.assertEqual(js("return window.app.errors"), [])
        self.assertEqual(console_errors(), [])
        screenshot("another-origin.png")

        # The same page on an origin fleetd was not told of: the browser refuses fleetd's answers.
        browser.get(f"http://127.0.0.1:{STRANGER_PORT}/ride.html" + fragment)
        errors = wait_for("the refusal", lambda: js("return window.app.errors.length && window.app.errors"), 30)
        self.assertTrue(all(e.startswith("UNAVAILABLE") for e in errors), errors)
        self.assertEqual(js("return window.app.updates"), 0)
        self.assertTrue(any("CORS" in e["message"] for e in console_errors()))


def money_text(money):
    """google.type.Money as the pages show it: "12.40 EUR" (EUR has two decimals)."""
    return f"{int(money.get('units', '0'))}.{str(money.get('nanos', 0)).rjust(9, '0')[:2]} {money['currencyCode']}"


class T6BookingFromTheFleetPage(unittest.TestCase):
    """The fleet page books a ride: pickup by a click on the map, drop-off by a place search with
    the offline geocoder, the quotes per product, a ride now and one for later; it shows the
    zones with their surge and fees and the scheduled rides; the sharing page shows the fare."""

    def click_map(self, lat, lng, field):
        """Clicks the map at a position; a click that lands on a car marker is tried beside it."""
        element = browser.find_element(By.ID, "map")
        width, height = element.size["width"], element.size["height"]
        for nudge in range(6):
            x, y = js(f"const p = window.fleetkitFleet.map.latLngToContainerPoint([{lat}, {lng + nudge * 0.0004}]);"
                      " return [p.x, p.y];")
            ActionChains(browser).move_to_element_with_offset(element, x - width / 2, y - height / 2).click().perform()
            try:
                return wait_for(f"the {field} from the click", lambda: js(
                    f"return document.getElementById('{field}').dataset.point"), 3)
            except AssertionError:
                continue
        raise AssertionError(f"no click on the map set the {field}")

    def quotes(self):
        browser.find_element(By.ID, "get-quotes").click()
        return wait_for("the quotes", lambda: js("""
          const rows = Array.from(document.querySelectorAll('#quotes tr.quote'));
          return rows.length && rows.map((r) => [r.dataset.product, r.querySelector('.fare').textContent]);"""), 30)

    def book(self, product):
        js(f"document.querySelector('#quotes tr.quote[data-product=\"{product}\"] button').click()")
        return wait_for("the booking", lambda: js(
            "const b = document.getElementById('booked'); return b.dataset.ride && [b.dataset.ride, b.dataset.state]"), 30)

    def test_a_ride_now_and_one_for_later_booked_from_the_fleet_page(self):
        console_errors()
        browser.set_window_size(1200, 800)
        browser.get(demo.fleet_url)
        wait_for("the fleet", lambda: js("return window.fleetkitFleet && window.fleetkitFleet.visibleVehicleCount()"), 60)
        zones = wait_for("the zones", lambda: js("""
          return Array.from(document.querySelectorAll('#zones tr.zone')).map((r) => [r.dataset.zone, r.textContent]);"""), 30)
        names = [name for name, _ in zones]
        self.assertEqual(names, ["Monte-Carlo", "Monaco-Ville", "Heliport", "Railway station"])
        self.assertIn("surge ×", zones[0][1])
        self.assertIn("fee 3.00 EUR", zones[2][1])
        # The service area (dashed) and the four zones, drawn on the map.
        self.assertGreaterEqual(js("return document.querySelectorAll('.leaflet-overlay-pane path').length"), 5)

        js("window.fleetkitFleet.map.setView([43.7375, 7.4245], 15, {animate: false})")
        # The pickup inside the Monte-Carlo zone: a click on a zone is one click on the map.
        point = self.click_map(43.7395, 7.4262, "pickup")
        lat, lng = map(float, point.split(","))
        self.assertLess(metres((lat, lng), (43.7395, 7.4262)), 60)
        self.assertFalse(js("return document.getElementById('dropoff').dataset.point"), "one click set both points")
        # The drop-off by name, with the offline geocoder (the demo's link carries an API key).
        box = browser.find_element(By.ID, "dropoff")
        box.clear()
        box.send_keys("Larvotto")
        quotes = self.quotes()
        self.assertTrue(js("return document.getElementById('dropoff').dataset.point"), "the search found no place")
        self.assertEqual([p for p, _ in quotes], ["standard", "shared", "taxi"])
        # The shared ride says how long it may take with other riders' detours; the others do not.
        notices = js("return Array.from(document.querySelectorAll('#quotes tr.quote .notice')).map((n) => n.textContent)")
        self.assertRegex(notices[1], r"up to \d+ min aboard")
        self.assertNotIn("aboard", notices[0])
        for _, fare in quotes:
            self.assertRegex(fare, r"^\d+\.\d{2} EUR$")
        screenshot("fleet-quotes.png")
        ride, state = self.book("standard")
        booked = demo.call("GET", f"/fleetkit/v1/providers/demo/rides/{ride}")
        try:
            self.assertEqual(booked["product"], "standard")
            self.assertEqual(money_text(booked["fare"]), dict(quotes)["standard"])
            self.assertIn(state, ("WAITING", "ASSIGNED"))

            # For later: 90 minutes ahead, a taxi; SCHEDULED and in the queue's scheduled list.
            js("""const at = new Date(Date.now() + 90 * 60000); at.setSeconds(0, 0);
                  const local = new Date(at.getTime() - at.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
                  document.getElementById('when').value = local;""")
            self.quotes()
            later, state = self.book("taxi")
            self.assertEqual(state, "SCHEDULED")
            scheduled = demo.call("GET", f"/fleetkit/v1/providers/demo/rides/{later}")
            self.assertEqual(scheduled["product"], "taxi")
            self.assertLess(abs(parse_time(scheduled["pickupTime"]) - time.time() - 90 * 60), 120)
            wait_for("the scheduled ride in the queue", lambda: browser.find_elements(
                By.CSS_SELECTOR, f"#scheduled tr[data-ride='{later}']"), 20)
            screenshot("fleet-booked.png")
            self.assertEqual(console_errors(), [])

            # Served share and waits, live from fleetd's metrics, once the demo's riders got in.
            def metric(name):
                text = urllib.request.urlopen(demo.url("/metrics"), timeout=5).read().decode()
                line = next((l for l in text.splitlines() if l.startswith(name + " ")), None)
                return float(line.split()[1]) if line else 0.0
            # The ride booked above, picked up by its simulated driver: at least one wait measured.
            where = {}
            asked = time.monotonic()

            def picked_up():
                trip = demo.call("GET", f"/v1/providers/demo/trips/{ride}")
                where["ride"] = demo.call("GET", f"/fleetkit/v1/providers/demo/rides/{ride}").get("state")
                where["trip"] = (trip.get("tripStatus"), trip.get("vehicleId"))
                if trip.get("vehicleId"):
                    # Whether its driver still reports and where the car is bound.
                    car = demo.call("GET", f"/v1/providers/demo/vehicles/{trip['vehicleId']}")
                    where["vehicle"] = (car.get("vehicleState"), car.get("lastLocation", {}).get("updateTime"),
                                        [(w.get("tripId"), w.get("waypointType")) for w in car.get("waypoints", [])])
                    # Whether the car moves, and how far it still is from the pickup: its track.
                    at = car.get("lastLocation", {}).get("location", {})
                    pickup = booked.get("pickupPoint", {}).get("point", {})
                    if at:
                        # With the drive the car reports: metres left and seconds left, so that a
                        # long way round tells from a drive begun again and again.
                        sample = (round(time.monotonic() - asked), round(metres(
                            (at.get("latitude", 0), at.get("longitude", 0)),
                            (pickup.get("latitude", 0), pickup.get("longitude", 0)))),
                            car.get("remainingDistanceMeters"), car.get("remainingTimeSeconds"))
                        track = where.setdefault("track (s, metres to the pickup, drive m, drive s)", [])
                        track.append(sample)
                        del track[:-12]
                        sparse = where.setdefault("every 10 s", [])
                        if not sparse or sample[0] - sparse[-1][0] >= 10:
                            sparse.append(sample)
                return trip.get("tripStatus") in ("ENROUTE_TO_DROPOFF", "COMPLETE")

            def bound_for_the_pickup():
                # A car may get the ride back to back, finishing another rider's drop-off first
                # (seen: it drove 3 km away from this pickup to that drop-off): bound for this
                # pickup means no stop of another ride before it.
                if picked_up():
                    return True
                stops = where.get("vehicle", (None, None, []))[2]
                return bool(stops) and stops[0] == (ride, "PICKUP_WAYPOINT_TYPE")
            try:
                wait_for("the booked car bound for the pickup", bound_for_the_pickup, 240, 1)
                wait_for("the booked ride picked up", picked_up, 240, 1)
            except AssertionError as error:
                # Where the ride stood, and what the demo said last.
                raise AssertionError(f"{error}: {where}; the demo's log ends:\n{demo.log_tail()}") from None
            self.assertGreater(metric("fleetd_ride_pickup_wait_seconds_count"), 0)
            shown = wait_for("the served share", lambda: js(
                "const s = document.getElementById('served'); return s && s.dataset.share"), 30)
            self.assertGreater(float(shown), 0)
            self.assertLessEqual(float(shown), 100)
            # Read in the page: the panel is redrawn on every update, so a found element goes stale.
            self.assertIn("wait: mean", js("return document.getElementById('wait').textContent"))

            # The sharing page shows the fare agreed at booking.
            browser.get(demo.url(f"/share/trips/{ride}#token=" + demo.token("consumer", trip=ride)))
            fare = wait_for("the fare on the sharing page", lambda: js(
                "const f = document.getElementById('fare'); return f && f.dataset.fare"), 30)
            self.assertEqual(fare, money_text(booked["fare"]))
            self.assertIn("standard", browser.find_element(By.ID, "fare").text)
            screenshot("share-fare.png")
        finally:
            # Clean-up: a ride that completed meanwhile cannot be canceled, and need not be.
            for r in (ride, locals().get("later")):
                if r:
                    try:
                        demo.call("DELETE", f"/fleetkit/v1/providers/demo/rides/{r}")
                    except urllib.error.HTTPError:
                        pass


def parse_time(text):
    from datetime import datetime
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class T4MissingLeaflet(unittest.TestCase):
    def test_pages_say_how_to_install_leaflet_when_it_is_missing(self):
        folder = tempfile.mkdtemp(prefix="fleetkit-no-leaflet-")
        http = free_port()
        process = subprocess.Popen(
            [FLEETD, "serve", "--data-dir", folder, "--grpc-port", "0", "--http-port", str(http),
             "--leaflet-dir", os.path.join(folder, "nowhere"), "--log-level", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            def healthy():
                try:
                    return urllib.request.urlopen(f"http://127.0.0.1:{http}/healthz", timeout=2).status == 200
                except OSError:
                    return False
            wait_for("fleetd", healthy, 60)
            browser.get(f"http://127.0.0.1:{http}/fleet#token=" + demo.token("server") + "&provider=demo")
            text = wait_for("the missing-Leaflet message", lambda: js(
                "const m = document.querySelector('.fk-missing'); return m && m.textContent"), 20)
            self.assertIn("apt-get install libjs-leaflet", text)
            screenshot("fleet-without-leaflet.png")
        finally:
            # Off the page first: it polls this fleetd, and a poll refused after the stop would be
            # logged as the next test's error.
            browser.get("about:blank")
            process.terminate()
            process.wait(timeout=30)


class T9FleetPageDeliveries(unittest.TestCase):
    """The fleet page shows delivery vehicles beside the rides' cars: each van on the map and in
    its table with its open tasks, and a selected van's remaining stops, in order, kept current."""

    DEPOT = {"latitude": 43.7347, "longitude": 7.4206}
    FIRST = {"latitude": 43.7384, "longitude": 7.4246}
    SECOND = {"latitude": 43.7396, "longitude": 7.4275}

    def stops(self, *segments):
        demo.call("PATCH", "/v1/providers/demo/deliveryVehicles/fleet-van?updateMask=remainingVehicleJourneySegments",
                  {"remainingVehicleJourneySegments": [
                      {"stop": {"plannedLocation": {"point": where}, "tasks": [{"taskId": t}], "state": state}}
                      for where, t, state in segments]})

    def test_delivery_vehicles_and_their_stops_on_the_fleet_page(self):
        demo.call("POST", "/v1/providers/demo/deliveryVehicles?deliveryVehicleId=fleet-van",
                  {"lastLocation": {"location": self.DEPOT}})
        for task, where in (("fleet-first", self.FIRST), ("fleet-second", self.SECOND)):
            demo.call("POST", f"/v1/providers/demo/tasks?taskId={task}", {
                "type": "DELIVERY", "state": "OPEN", "trackingId": task, "taskDuration": "60s",
                "plannedLocation": {"point": where}})
        self.stops((self.FIRST, "fleet-first", "ENROUTE"), (self.SECOND, "fleet-second", "NEW"))

        # Off the last test's page before its errors are drained: that page (a tracking link for
        # no shipment) still asks fleetd, and a refusal logged after the drain was taken for this
        # page's error.
        browser.get("about:blank")
        console_errors()
        browser.get(demo.fleet_url)
        row = lambda: js("""const r = document.querySelector('#delivery-vehicles tr[data-vehicle="fleet-van"]');
                            return r && !document.getElementById('deliveries').hidden
                              ? [r.children[0].textContent, r.children[1].textContent] : null""")
        self.assertEqual(wait_for("the van's row with its open tasks",
                                  lambda: (lambda r: r if r and r[1] == "2" else None)(row()), 30),
                         ["fleet-van", "2"])
        self.assertTrue(js("return window.fleetkitFleet.markers.has('delivery:fleet-van')"))
        # The demo's own vans (`fleetd demo --deliveries 2`) are listed beside it.
        wait_for("the demo's vans", lambda: js("""return ['van-1', 'van-2'].every((id) =>
            document.querySelector(`#delivery-vehicles tr[data-vehicle="${id}"]`))"""), 30)
        # Rides' cars and vans are told apart: the cars' count is unchanged.
        self.assertEqual(js("return window.fleetkitFleet.visibleVehicleCount()"), VEHICLES)

        def click_van():
            try:
                browser.find_element(By.CSS_SELECTOR, '#delivery-vehicles tr[data-vehicle="fleet-van"]').click()
                return True
            except StaleElementReferenceException:
                return False
        wait_for("a click on the van's row", click_van, 10)
        stops = lambda: js("""const l = document.querySelectorAll('#van-stops li');
                              return Array.from(l).map((e) => e.dataset.state + ' ' + e.textContent)""")
        self.assertEqual(wait_for("the van's stops", lambda: stops() or None, 20),
                         ["ENROUTE enroute: fleet-first", "NEW new: fleet-second"])
        self.assertEqual(js("return document.querySelectorAll('.fk-van-stop').length"), 2)
        self.assertIn("2 stops left", browser.find_element(By.ID, "details").text)
        screenshot("fleet-deliveries.png")

        # The first stop is done: the page follows within its refresh.
        self.stops((self.SECOND, "fleet-second", "ENROUTE"))
        self.assertEqual(wait_for("one stop left", lambda: (lambda s: s if len(s) == 1 else None)(stops()), 20),
                         ["ENROUTE enroute: fleet-second"])
        self.assertEqual(wait_for("one open task", lambda: (lambda r: r if r and r[1] == "1" else None)(row()), 20),
                         ["fleet-van", "1"])
        self.assertEqual(console_errors(), [])


class T10DemoDeliveries(unittest.TestCase):
    """`fleetd demo --deliveries` runs days of parcels on the Driver SDK's delivery mode and prints
    a parcel's tracking link, which a recipient opens: the van is seen coming, or the parcel is
    done."""

    def test_the_demos_tracking_link_follows_a_parcel(self):
        link = wait_for("the demo's tracking link", lambda: next(
            (m.group(1) for line in list(demo.output) for m in [re.search(r"track one: (\S+)", line)] if m), None), 60)
        browser.get("about:blank")
        browser.get(link)
        done = ("DELIVERED", "ATTEMPTED")
        on_the_way = ("NEXT", "ON_THE_WAY")
        state = wait_for("the parcel on its way or done", lambda: (
            lambda s: s if s["status"] in done or (s["status"] in on_the_way and s["vehicle"] and s["destination"])
            else None)(tracking_state()), 30)
        self.assertTrue(state["banner"])
        self.assertEqual(console_errors(), [])


class T8TrackingPage(unittest.TestCase):
    """The shipment tracking page follows a delivery: the van coming, the stops before this one,
    the outcome; and says so for a link that is not valid, not for this shipment or unknown."""

    DEPOT = {"latitude": 43.7347, "longitude": 7.4206}
    FIRST = {"latitude": 43.7384, "longitude": 7.4246}
    HOME = {"latitude": 43.7396, "longitude": 7.4275}

    @classmethod
    def setUpClass(cls):
        # A recipient's key: a deliveryconsumer token names one tracking ID.
        cls.key = os.path.join(demo.dir, "tracking-consumer.json")
        subprocess.run([FLEETD, "keys", "add", "--data-dir", os.path.join(demo.dir, "data"), "--provider", "demo",
                        "--role", "deliveryconsumer", "--out", cls.key], check=True, capture_output=True)

    def token(self, tracking, ttl=3600):
        return subprocess.run([FLEETD, "token", "--key", self.key, "--tracking-id", tracking, "--ttl", str(ttl)],
                              check=True, capture_output=True, text=True).stdout.strip()

    def state(self):
        return tracking_state()

    def move(self, where):
        demo.call("PATCH", "/v1/providers/demo/deliveryVehicles/browser-van?updateMask=lastLocation",
                  {"lastLocation": {"location": where}})

    def stops(self, *segments):
        demo.call("PATCH", "/v1/providers/demo/deliveryVehicles/browser-van?updateMask=remainingVehicleJourneySegments",
                  {"remainingVehicleJourneySegments": [
                      {"stop": {"plannedLocation": {"point": where}, "tasks": [{"taskId": t}], "state": state}}
                      for where, t, state in segments]})

    def test_a_delivery_is_followed_to_the_door(self):
        demo.call("POST", "/v1/providers/demo/deliveryVehicles?deliveryVehicleId=browser-van",
                  {"lastLocation": {"location": self.DEPOT}})
        for task, where, tracking in (("browser-first", self.FIRST, "browser-other"), ("browser-parcel", self.HOME, "browser-ship")):
            demo.call("POST", f"/v1/providers/demo/tasks?taskId={task}", {
                "type": "DELIVERY", "state": "OPEN", "trackingId": tracking, "taskDuration": "120s",
                "plannedLocation": {"point": where}})
        self.stops((self.FIRST, "browser-first", "ENROUTE"), (self.HOME, "browser-parcel", "NEW"))

        browser.get("about:blank")
        browser.get(demo.url("/track/browser-ship#token=" + self.token("browser-ship")))
        first = wait_for("the first stop ahead", lambda: (lambda s: s if s["stops"] == "1" else None)(self.state()), 20)
        self.assertEqual(first["banner"], "Out for delivery: 1 stop before yours")
        self.assertAlmostEqual(first["destination"][0], self.HOME["latitude"], places=4)
        self.assertAlmostEqual(first["vehicle"][0], self.DEPOT["latitude"], places=4)
        self.assertGreater(int(first["meters"]), 0)
        # The way to this stop, over the first one, on Monaco's roads (more than the three points).
        self.assertGreater(first["route"], 3)
        screenshot("track-on-the-way.png")

        # The first stop is made: this one is next, and the van is seen moving towards it.
        self.move(self.FIRST)
        self.stops((self.HOME, "browser-parcel", "ENROUTE"))
        nearer = wait_for("this delivery next", lambda: (lambda s: s if s["stops"] == "0" else None)(self.state()), 20)
        self.assertEqual(nearer["banner"], "Your delivery is next")
        self.assertAlmostEqual(nearer["vehicle"][0], self.FIRST["latitude"], places=4)
        self.assertLess(int(nearer["meters"]), int(first["meters"]))

        demo.call("PATCH", "/v1/providers/demo/tasks/browser-parcel?updateMask=taskOutcome",
                  {"taskOutcome": "SUCCEEDED"})
        demo.call("PATCH", "/v1/providers/demo/deliveryVehicles/browser-van?updateMask=remainingVehicleJourneySegments", {})
        done = wait_for("the delivery done", lambda: (lambda s: s if s["status"] == "DELIVERED" else None)(self.state()), 20)
        self.assertEqual(done["banner"], "Delivered")
        self.assertIn("Delivered at", done["message"])
        self.assertIsNone(done["vehicle"])  # the van is no longer shown once it is over
        self.assertEqual(done["route"], 0)
        screenshot("track-delivered.png")
        self.assertEqual(console_errors(), [])

    def message(self, path):
        browser.get("about:blank")
        browser.get(demo.url(path))
        return wait_for("an error message", lambda: js(
            "const m = document.getElementById('message'); return !m.hidden && m.textContent"), 20)

    def test_bad_foreign_and_unknown_tracking_links_say_so(self):
        self.assertIn("not valid", self.message("/track/browser-ship#token=garbage"))
        self.assertIn("not for this shipment", self.message("/track/browser-ship#token=" + self.token("someone-elses")))
        self.assertIn("no shipment with this tracking number", self.message("/track/nobody#token=" + self.token("nobody")))
        screenshot("track-error.png")


if __name__ == "__main__":
    unittest.main(verbosity=2)
