"""Several fleetd processes on one PostgreSQL database: every change reaches every instance, and
no acknowledged write is lost when an instance, its listening connection or PostgreSQL itself
fails. Needs CONFORMANCE_POSTGRES (a cluster's admin URL) and CONFORMANCE_PG_RESTART, the command
that restarts that cluster at once (`pg_ctl restart -m immediate`)."""
import json
import os
import queue
import socket
import subprocess
import threading
import time
import urllib.request

import pytest
from google.api_core import exceptions as gx
from google.maps import fleetengine_v1 as fe

from conftest import FLEETD, POSTGRES, P, Fleetd, mask, trip, vehicle

RESTART = os.environ.get("CONFORMANCE_PG_RESTART")
if not POSTGRES or not RESTART:
    raise RuntimeError("test_instances.py needs CONFORMANCE_POSTGRES (a cluster's admin URL) and CONFORMANCE_PG_RESTART"
                       " (dev/throwaway-postgres.sh restart DIR, for a cluster started with it)")


def located(lat, lng=7.42):
    return fe.Vehicle(last_location=fe.VehicleLocation(location={"latitude": lat, "longitude": lng}))


@pytest.fixture
def pair():
    """Two instances, A and B, on one database."""
    server = Fleetd(instances=2).start()
    yield server
    server.stop()


def psql(sql, database="postgres"):
    url = POSTGRES.rsplit("/", 1)[0] + "/" + database + "?sslmode=disable"
    return subprocess.run(["psql", url, "-v", "ON_ERROR_STOP=1", "-Atc", sql], check=True,
                          capture_output=True, text=True).stdout.strip()


class TripEvents:
    """A rider's server-sent events for one trip, on one instance, read on a thread of their own."""

    def __init__(self, instance, name, token):
        request = urllib.request.Request(f"http://127.0.0.1:{instance.http_port}/fleetkit/v1/{name}:watch",
                                         headers={"Authorization": "Bearer " + token})
        self.response = urllib.request.urlopen(request, timeout=60)
        self.socket = self.response.fp.raw._sock
        self.events = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        kind = None
        try:
            for raw in self.response:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: ") and kind == "trip":
                    self.events.put(json.loads(line[6:]))
        except Exception:
            pass
        self.events.put(None)

    def next(self, timeout=10):
        return self.events.get(timeout=timeout)

    def until(self, condition, timeout=10):
        """Events up to the first that meets `condition`."""
        seen = []
        deadline = time.time() + timeout
        while True:
            event = self.next(max(0.01, deadline - time.time()))
            assert event is not None, "the stream ended"
            seen.append(event)
            if condition(event):
                return seen

    def close(self):
        # Hangs up at once, even while the reader thread waits in a read.
        try:
            self.socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.response.close()


def latitude(event):
    return event.get("lastLocation", {}).get("location", {}).get("latitude")


def test_a_rider_on_b_sees_every_change_made_on_a_in_order(pair):
    trips_a, vehicles_a = pair.client(0)
    md = pair.md()
    vehicles_a.create_vehicle(request=fe.CreateVehicleRequest(parent=P, vehicle_id="car", vehicle=vehicle()), metadata=md)
    trips_a.create_trip(request=fe.CreateTripRequest(parent=P, trip_id="ride", trip=trip()), metadata=md)
    events = TripEvents(pair.instances[1], f"{P}/trips/ride", pair.token())
    try:
        assert events.next()["tripStatus"] == "NEW"
        trips_a.update_trip(request=fe.UpdateTripRequest(name=f"{P}/trips/ride", trip=fe.Trip(
            vehicle_id="car", trip_status=fe.TripStatus.ENROUTE_TO_PICKUP), update_mask=mask("vehicle_id", "trip_status")),
            metadata=md)
        assert events.until(lambda e: e.get("tripStatus") == "ENROUTE_TO_PICKUP")[-1]["vehicleId"] == "car"
        # Each position is written on A once the one before has reached B: every one must come, once, in order.
        sent = [round(43.7300 + i / 10000, 6) for i in range(30)]
        seen = []
        for lat in sent:
            vehicles_a.update_vehicle(request=fe.UpdateVehicleRequest(name=f"{P}/vehicles/car", vehicle=located(lat),
                                                                      update_mask=mask("last_location")), metadata=md)
            seen += [latitude(e) for e in events.until(lambda e: latitude(e) == pytest.approx(lat))]
        seen = [round(x, 6) for x in seen if x is not None]
        # Nothing newer before older, no position twice.
        assert [x for x in seen if x in sent] == sent
        trips_a.update_trip(request=fe.UpdateTripRequest(name=f"{P}/trips/ride", trip=fe.Trip(
            trip_status=fe.TripStatus.COMPLETE), update_mask=mask("trip_status")), metadata=md)
        assert events.until(lambda e: e.get("tripStatus") == "COMPLETE")
        assert events.next() is None  # a finished trip ends the stream
    finally:
        events.close()


def drive(client, md, vehicles, stop, acknowledged, errors):
    """Writes increasing positions until `stop`, noting the newest acknowledged per vehicle."""
    step = 0
    while not stop.is_set():
        step += 1
        for vid in vehicles:
            try:
                client.update_vehicle(request=fe.UpdateVehicleRequest(
                    name=f"{P}/vehicles/{vid}", vehicle=located(43.7 + step / 100000),
                    update_mask=mask("last_location")), metadata=md, timeout=5, retry=None)
                acknowledged[vid] = step
            except Exception as error:  # the instance died or the database restarted: not acknowledged
                errors.append(error)
                time.sleep(0.05)


def create_fleet(client, md, count):
    ids = [f"v{i}" for i in range(count)]
    for vid in ids:
        client.create_vehicle(request=fe.CreateVehicleRequest(parent=P, vehicle_id=vid, vehicle=vehicle()), metadata=md)
    return ids


def stored_step(client, md, vid):
    v = client.get_vehicle(request=fe.GetVehicleRequest(name=f"{P}/vehicles/{vid}"), metadata=md)
    return round((v.last_location.location.latitude - 43.7) * 100000)


def test_kill_9_of_a_under_load_loses_no_acknowledged_write(pair):
    _, vehicles_a = pair.client(0)
    _, vehicles_b = pair.client(1)
    md = pair.md()
    ids = create_fleet(vehicles_a, md, 8)
    trips_a, _ = pair.client(0)
    trips_a.create_trip(request=fe.CreateTripRequest(parent=P, trip_id="ride", trip=trip(vehicle_id="v0")), metadata=md)
    events = TripEvents(pair.instances[1], f"{P}/trips/ride", pair.token())
    stop, acknowledged, errors = threading.Event(), {}, []
    writers = [threading.Thread(target=drive, args=(vehicles_a, md, ids[i::2], stop, acknowledged, errors))
               for i in range(2)]
    for w in writers:
        w.start()
    time.sleep(2)
    pair.instances[0].kill(sig_kill=True)
    stop.set()
    for w in writers:
        w.join()
    assert acknowledged, "no write was acknowledged before the kill"
    # Every acknowledged position is on B (a newer one may have landed unacknowledged).
    for vid, step in acknowledged.items():
        assert stored_step(vehicles_b, md, vid) >= step, vid
    # B's rider got v0's last stored position.
    final = stored_step(vehicles_b, md, "v0")
    events.until(lambda e: latitude(e) is not None and round((latitude(e) - 43.7) * 100000) == final)
    events.close()
    # A restarts and serves the same fleet.
    restarted = Fleetd(data_dir=pair.data_dir, instances=1)
    restarted.keys = pair.keys
    restarted.start()
    try:
        for vid in ids:
            assert stored_step(restarted.vehicles, md, vid) == stored_step(vehicles_b, md, vid)
    finally:
        restarted.stop()


def listening_backends():
    return psql("SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND application_name = 'fleetd'",
                database="postgres").split()


def test_a_lost_listening_connection_misses_nothing(pair):
    trips_a, vehicles_a = pair.client(0)
    md = pair.md()
    vehicles_a.create_vehicle(request=fe.CreateVehicleRequest(parent=P, vehicle_id="car", vehicle=vehicle()), metadata=md)
    trips_a.create_trip(request=fe.CreateTripRequest(parent=P, trip_id="ride", trip=trip(vehicle_id="car")), metadata=md)
    events = TripEvents(pair.instances[1], f"{P}/trips/ride", pair.token())
    try:
        events.next()
        backends = listening_backends()
        assert len(backends) == 2, backends  # one per instance
        psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%'")
        # Written while B is without its connection, and after: every one reaches B's rider.
        sent = [round(43.74 + i / 10000, 6) for i in range(20)]
        for lat in sent:
            vehicles_a.update_vehicle(request=fe.UpdateVehicleRequest(name=f"{P}/vehicles/car", vehicle=located(lat),
                                                                      update_mask=mask("last_location")), metadata=md)
        seen = [round(latitude(e), 6) for e in events.until(lambda e: latitude(e) == pytest.approx(sent[-1]))
                if latitude(e) is not None]
        assert seen[-1] == sent[-1]
        assert seen == sorted(seen) and len(set(seen)) == len(seen)
        # The instances listen again.
        deadline = time.time() + 10
        while len(listening_backends()) < 2 and time.time() < deadline:
            time.sleep(0.2)
        assert len(listening_backends()) == 2
    finally:
        events.close()


def test_postgresql_restarted_under_load_loses_no_acknowledged_write(pair):
    _, vehicles_a = pair.client(0)
    _, vehicles_b = pair.client(1)
    md = pair.md()
    ids = create_fleet(vehicles_a, md, 6)
    stop, acknowledged, errors = threading.Event(), {}, []
    writers = [threading.Thread(target=drive, args=(client, md, ids[i::2], stop, acknowledged, errors))
               for i, client in enumerate([vehicles_a, vehicles_b])]
    for w in writers:
        w.start()
    time.sleep(1.5)
    started = psql("SELECT pg_postmaster_start_time()")
    subprocess.run(RESTART, shell=True, check=True, capture_output=True)
    assert psql("SELECT pg_postmaster_start_time()") != started, "PostgreSQL did not restart"
    # Both instances recover by themselves: writes are acknowledged again. (A commit whose answer
    # the restart cut off may have been stored: each instance learns it from the log.)
    before = dict(acknowledged)
    deadline = time.time() + 30
    while time.time() < deadline and not all(acknowledged.get(v, 0) > before.get(v, 0) for v in ids):
        time.sleep(0.2)
    stop.set()
    for w in writers:
        w.join()
    assert all(acknowledged.get(v, 0) > before.get(v, 0) for v in ids), "writes did not recover"
    # Whether a client saw the restart (a write in flight failed) or only a delay depends on
    # timing; either way nothing acknowledged may be lost.
    for client in (vehicles_a, vehicles_b):
        for vid, step in acknowledged.items():
            assert stored_step(client, md, vid) >= step, vid


def test_concurrent_updates_of_one_vehicle_through_both_are_all_kept(pair):
    md = pair.md()
    _, vehicles_a = pair.client(0)
    vehicles_a.create_vehicle(request=fe.CreateVehicleRequest(parent=P, vehicle_id="car", vehicle=vehicle()), metadata=md)
    failures = []

    def update(instance, prefix):
        _, client = pair.client(instance)
        for i in range(20):
            while True:
                try:
                    client.update_vehicle_attributes(request=fe.UpdateVehicleAttributesRequest(
                        name=f"{P}/vehicles/car", attributes=[{"key": f"{prefix}{i}", "value": "yes"}]),
                        metadata=md, retry=None)
                    break
                except gx.Aborted:
                    continue  # Fleet Engine's answer to a concurrent change: send it again
                except Exception as error:
                    failures.append(error)
                    return

    threads = [threading.Thread(target=update, args=(i, name)) for i, name in enumerate("ab")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    for instance in range(2):
        _, client = pair.client(instance)
        v = client.get_vehicle(request=fe.GetVehicleRequest(name=f"{P}/vehicles/car"), metadata=md)
        assert sorted(a.key for a in v.attributes) == sorted(f"{p}{i}" for p in "ab" for i in range(20))


def test_quotas_are_shared_not_multiplied():
    server = Fleetd(extra=["--quota", "read=4"], instances=2).start()
    try:
        md = server.md()
        for _ in range(4):  # calls alternate between the instances
            with pytest.raises(gx.NotFound):
                server.trips.get_trip(request=fe.GetTripRequest(name=f"{P}/trips/x"), metadata=md)
        with pytest.raises(gx.ResourceExhausted):
            server.trips.get_trip(request=fe.GetTripRequest(name=f"{P}/trips/x"), metadata=md, retry=None)
    finally:
        server.stop()


def test_a_key_revoked_through_one_instance_is_refused_by_all(pair):
    md = pair.md()  # registers the server key
    for instance in range(2):
        pair.client(instance)[1].list_vehicles(request=fe.ListVehiclesRequest(
            parent=P, vehicle_type_categories=[fe.Vehicle.VehicleType.Category.AUTO]), metadata=md)
    key_id = json.load(open(pair.keys[("conformance", "server")]))["private_key_id"]
    subprocess.run([FLEETD, "keys", "revoke", "--data-dir", pair.data_dir] + pair.store + [key_id], check=True,
                   capture_output=True)
    deadline = time.time() + 10
    refused = set()
    while len(refused) < 2 and time.time() < deadline:
        for instance in range(2):
            try:
                pair.client(instance)[1].list_vehicles(request=fe.ListVehiclesRequest(
                    parent=P, vehicle_type_categories=[fe.Vehicle.VehicleType.Category.AUTO]), metadata=md, retry=None)
            except gx.Unauthenticated:
                refused.add(instance)
        time.sleep(0.2)
    assert refused == {0, 1}




def test_a_driver_moving_to_the_other_instance_mid_trip_keeps_its_progress(monaco_graph):
    server = Fleetd(extra=["--graph", monaco_graph], instances=2).start()
    try:
        md = server.md()
        clients = [server.client(0), server.client(1)]
        start, pickup = (43.7352, 7.4214), (43.7384, 7.4246)
        clients[0][1].create_vehicle(request=fe.CreateVehicleRequest(parent=P, vehicle_id="car", vehicle=vehicle()),
                                     metadata=md)
        clients[0][0].create_trip(request=fe.CreateTripRequest(parent=P, trip_id="ride", trip=trip(vehicle_id="car")),
                                  metadata=md)
        clients[0][0].update_trip(request=fe.UpdateTripRequest(name=f"{P}/trips/ride", trip=fe.Trip(
            trip_status=fe.TripStatus.ENROUTE_TO_PICKUP), update_mask=mask("trip_status")), metadata=md)

        t0 = time.time() - 300

        def report(instance, point, minute):
            # Fixes a minute apart, as a driver moving at city speed would send them.
            seconds = t0 + 60 * minute
            location = fe.VehicleLocation(location={"latitude": point[0], "longitude": point[1]},
                                          update_time={"seconds": int(seconds)})
            clients[instance][1].update_vehicle(request=fe.UpdateVehicleRequest(
                name=f"{P}/vehicles/car", vehicle=fe.Vehicle(last_location=location),
                update_mask=mask("last_location")), metadata=md)

        def remaining(instance):
            t = clients[instance][0].get_trip(request=fe.GetTripRequest(name=f"{P}/trips/ride"), metadata=md)
            return t.remaining_distance_meters, t.eta_to_first_waypoint.timestamp(), [(p.latitude, p.longitude) for p in t.route]

        report(0, start, 0)  # the driver's app talks to A
        first = remaining(0)
        route = first[2]
        assert len(route) > 5 and first[0] > 0
        assert remaining(1) == first  # B serves the progress A computed
        report(0, route[len(route) // 4], 1)
        on_a = remaining(0)
        assert 0 < on_a[0] < first[0]
        assert remaining(1) == on_a
        report(1, route[len(route) // 2], 2)  # then, reconnected, to B
        report(1, route[3 * len(route) // 4], 3)
        on_b = remaining(1)
        assert 0 < on_b[0] < on_a[0]  # progress went on from where it was
        assert remaining(0) == on_b
    finally:
        server.stop()


def rest(instance, method, path, token, body=None):
    request = urllib.request.Request(f"http://127.0.0.1:{instance.http_port}{path}", method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def book_and_wait(instance, md, token, ride_id, vehicles_client, vehicle_id, at):
    vehicles_client.create_vehicle(request=fe.CreateVehicleRequest(parent=P, vehicle_id=vehicle_id, vehicle=vehicle(
        last_location=fe.VehicleLocation(location={"latitude": at[0], "longitude": at[1]}))), metadata=md)
    rest(instance, "POST", f"/fleetkit/v1/{P}/rides?rideId={ride_id}", token, {
        "pickupPoint": {"point": {"latitude": 43.7384, "longitude": 7.4246}},
        "dropoffPoint": {"point": {"latitude": 43.7396, "longitude": 7.4275}}})
    deadline = time.time() + 20
    while time.time() < deadline:
        ride = rest(instance, "GET", f"/fleetkit/v1/{P}/rides/{ride_id}", token)
        if ride["state"] != "WAITING":
            return ride
        time.sleep(0.2)
    raise AssertionError(f"ride {ride_id} was not assigned within 20 s")


def test_the_dispatcher_moves_to_another_instance_when_its_own_dies():
    server = Fleetd(extra=["--dispatch", "--dispatch-interval", "0.5"], instances=2).start()
    try:
        md, token = server.md(), server.token()
        holder = [i for i in range(2) if b"dispatch lease taken" in open(server.instances[i].log.name, "rb").read()]
        assert len(holder) == 1, holder  # exactly one instance dispatches
        leader, survivor = holder[0], 1 - holder[0]
        _, vehicles_s = server.client(survivor)
        first = book_and_wait(server.instances[survivor], md, token, "r1", vehicles_s, "v1", (43.7380, 7.4240))
        assert first["state"] == "ASSIGNED" and first["vehicleId"] == "v1"
        server.instances[leader].kill(sig_kill=True)
        second = book_and_wait(server.instances[survivor], md, token, "r2", vehicles_s, "v2", (43.7386, 7.4250))
        assert second["state"] == "ASSIGNED" and second["vehicleId"] == "v2"
        # The first ride kept its car, once: the new dispatcher neither forgot nor reassigned it.
        assert rest(server.instances[survivor], "GET", f"/fleetkit/v1/{P}/rides/r1", token)["vehicleId"] == "v1"
        v1 = vehicles_s.get_vehicle(request=fe.GetVehicleRequest(name=f"{P}/vehicles/v1"), metadata=md)
        assert list(v1.current_trips) == ["r1"]
    finally:
        server.stop()
