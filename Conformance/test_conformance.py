"""Google's published Fleet Engine client (google-maps-fleetengine) against fleetd over gRPC:
every RPC, and every status code fleetd documents."""
import base64
import json
import time

import grpc
import pytest
from google.api_core import exceptions as gx
from google.maps import fleetengine_v1 as fe
from google.protobuf import duration_pb2

from google.maps.fleetengine_v1.services.vehicle_service.transports import VehicleServiceGrpcTransport

from conftest import P, Fleetd, mask, trip, vehicle


def test_every_trip_and_vehicle_rpc(fleetd):
    md = fleetd.md()
    v = fleetd.vehicles.create_vehicle(request=fe.CreateVehicleRequest(parent=P, vehicle_id="car-1", vehicle=vehicle()), metadata=md)
    assert v.name == f"{P}/vehicles/car-1"
    assert fleetd.vehicles.get_vehicle(request=fe.GetVehicleRequest(name=v.name), metadata=md).maximum_capacity == 4

    t = fleetd.trips.create_trip(request=fe.CreateTripRequest(parent=P, trip_id="trip-1", trip=trip("car-1")), metadata=md)
    assert t.trip_status == fe.TripStatus.NEW
    assert [w.waypoint_type for w in t.vehicle_waypoints] == [fe.WaypointType.PICKUP_WAYPOINT_TYPE, fe.WaypointType.DROP_OFF_WAYPOINT_TYPE]

    located = fleetd.vehicles.update_vehicle(request=fe.UpdateVehicleRequest(
        name=v.name, vehicle=fe.Vehicle(last_location=fe.VehicleLocation(location={"latitude": 43.735, "longitude": 7.421}, heading=90)),
        update_mask=mask("last_location")), metadata=md)
    assert located.last_location.heading == 90 and located.last_location.server_time

    got = fleetd.trips.get_trip(request=fe.GetTripRequest(name=t.name), metadata=md)
    assert got.last_location.location.latitude == pytest.approx(43.735)
    assert list(got.vehicle_waypoints) == []  # GetTrip never returns vehicle_waypoints
    assert len(got.remaining_waypoints) == 2

    for status in (fe.TripStatus.ENROUTE_TO_PICKUP, fe.TripStatus.ARRIVED_AT_PICKUP, fe.TripStatus.ENROUTE_TO_DROPOFF):
        updated = fleetd.trips.update_trip(request=fe.UpdateTripRequest(name=t.name, trip=fe.Trip(trip_status=status), update_mask=mask("trip_status")), metadata=md)
        assert updated.trip_status == status
    assert [w.waypoint_type for w in updated.remaining_waypoints] == [fe.WaypointType.DROP_OFF_WAYPOINT_TYPE]
    assert fleetd.vehicles.get_vehicle(request=fe.GetVehicleRequest(name=v.name), metadata=md).current_trips == ["trip-1"]

    found = fleetd.trips.search_trips(request=fe.SearchTripsRequest(parent=P, vehicle_id="car-1", active_trips_only=True), metadata=md)
    assert [x.name for x in found] == [t.name]

    listed = fleetd.vehicles.list_vehicles(request=fe.ListVehiclesRequest(
        parent=P, vehicle_type_categories=[fe.Vehicle.VehicleType.Category.AUTO], on_trip_only=True), metadata=md)
    assert [x.name for x in listed] == [v.name]

    attrs = fleetd.vehicles.update_vehicle_attributes(request=fe.UpdateVehicleAttributesRequest(
        name=v.name, attributes=[fe.VehicleAttribute(key="ev", bool_value=True), fe.VehicleAttribute(key="tier", string_value="gold")]), metadata=md)
    assert {a.key for a in attrs.attributes} == {"ev", "tier"}

    fleetd.trips.update_trip(request=fe.UpdateTripRequest(name=t.name, trip=fe.Trip(trip_status=fe.TripStatus.COMPLETE), update_mask=mask("trip_status")), metadata=md)
    assert fleetd.vehicles.get_vehicle(request=fe.GetVehicleRequest(name=v.name), metadata=md).current_trips == []
    fleetd.trips.report_billable_trip(request=fe.ReportBillableTripRequest(name=f"{P}/billableTrips/trip-1", country_code="MC",
                                                                          platform=fe.BillingPlatformIdentifier.SERVER), metadata=md)
    fleetd.trips.delete_trip(request=fe.DeleteTripRequest(name=t.name), metadata=md)
    fleetd.vehicles.delete_vehicle(request=fe.DeleteVehicleRequest(name=v.name), metadata=md)
    with pytest.raises(gx.NotFound):
        fleetd.vehicles.get_vehicle(request=fe.GetVehicleRequest(name=v.name), metadata=md)


def test_paging_is_stable(fleetd):
    md = fleetd.md()
    for i in range(7):
        fleetd.vehicles.create_vehicle(request=fe.CreateVehicleRequest(parent=P, vehicle_id=f"v{i}", vehicle=vehicle()), metadata=md)
    pager = fleetd.vehicles.list_vehicles(request=fe.ListVehiclesRequest(
        parent=P, page_size=3, vehicle_type_categories=[fe.Vehicle.VehicleType.Category.AUTO]), metadata=md)
    assert [v.name.split("/")[-1] for v in pager] == [f"v{i}" for i in range(7)]


def test_invalid_argument(fleetd):
    md = fleetd.md()
    cases = [
        (lambda: fleetd.trips.create_trip(request=fe.CreateTripRequest(parent=P, trip_id="a/b", trip=trip()), metadata=md), "trip_id"),
        (lambda: fleetd.trips.create_trip(request=fe.CreateTripRequest(parent=P, trip_id="x", trip=fe.Trip(trip_type=fe.TripType.EXCLUSIVE)), metadata=md), "pickup_point"),
        (lambda: fleetd.trips.create_trip(request=fe.CreateTripRequest(parent=P, trip_id="x", trip=trip(pickup_point=fe.TerminalLocation(point={"latitude": 91, "longitude": 0}))), metadata=md), "latitude"),
        (lambda: fleetd.trips.update_trip(request=fe.UpdateTripRequest(name=f"{P}/trips/x", trip=fe.Trip()), metadata=md), "update_mask cannot be empty"),
        (lambda: fleetd.vehicles.create_vehicle(request=fe.CreateVehicleRequest(parent=P, vehicle_id="v", vehicle=vehicle(maximum_capacity=0)), metadata=md), "maximum_capacity"),
        (lambda: fleetd.vehicles.list_vehicles(request=fe.ListVehiclesRequest(parent=P), metadata=md), "vehicle_type_categories"),
        (lambda: fleetd.trips.get_trip(request=fe.GetTripRequest(name="trips/x"), metadata=md), "name"),
        (lambda: fleetd.trips.create_trip(request=fe.CreateTripRequest(parent=P, trip_id="x", trip=trip(trip_type=7)), metadata=md), "trip.trip_type"),
    ]
    for call, fragment in cases:
        with pytest.raises(gx.InvalidArgument) as error:
            call()
        assert fragment in error.value.message, error.value.message


def test_malformed_protobuf_is_invalid_argument(fleetd):
    raw = fleetd.channel.unary_unary("/maps.fleetengine.v1.TripService/GetTrip")
    with pytest.raises(grpc.RpcError) as error:
        raw(b"\x1a\xff\xff\xff", metadata=fleetd.md())
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # A string field holding invalid UTF-8 (field 3 = name).
    with pytest.raises(grpc.RpcError) as error:
        raw(b"\x1a\x02\xc3\x28", metadata=fleetd.md())
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize("algorithm", [grpc.Compression.Gzip, grpc.Compression.Deflate], ids=["gzip", "deflate"])
def test_compressed_requests(fleetd, algorithm):
    """A client may compress what it sends (gRPC's compression document): fleetd reads gzip and deflate."""
    channel = grpc.insecure_channel(f"127.0.0.1:{fleetd.grpc_port}", compression=algorithm)
    try:
        vehicles = fe.VehicleServiceClient(transport=VehicleServiceGrpcTransport(channel=channel))
        md = fleetd.md()
        name = f"{P}/vehicles/zipped-{algorithm.name.lower()}"
        tags = [fe.VehicleAttribute(key=f"tag{i}", string_value="compressible " * 10) for i in range(20)]
        created = vehicles.create_vehicle(request=fe.CreateVehicleRequest(
            parent=P, vehicle_id=name.rsplit("/", 1)[1], vehicle=vehicle(attributes=tags)), metadata=md)
        assert created.name == name and len(created.attributes) == 20
        assert vehicles.get_vehicle(request=fe.GetVehicleRequest(name=name), metadata=md).attributes[3].string_value == "compressible " * 10
    finally:
        channel.close()


def test_not_found_already_exists_failed_precondition_unimplemented(fleetd):
    md = fleetd.md()
    with pytest.raises(gx.NotFound):
        fleetd.trips.get_trip(request=fe.GetTripRequest(name=f"{P}/trips/none"), metadata=md)
    fleetd.vehicles.create_vehicle(request=fe.CreateVehicleRequest(parent=P, vehicle_id="car", vehicle=vehicle()), metadata=md)
    with pytest.raises(gx.AlreadyExists):
        fleetd.vehicles.create_vehicle(request=fe.CreateVehicleRequest(parent=P, vehicle_id="car", vehicle=vehicle()), metadata=md)
    t = fleetd.trips.create_trip(request=fe.CreateTripRequest(parent=P, trip_id="t", trip=trip("car")), metadata=md)
    with pytest.raises(gx.FailedPrecondition):
        fleetd.vehicles.delete_vehicle(request=fe.DeleteVehicleRequest(name=f"{P}/vehicles/car"), metadata=md)
    with pytest.raises(gx.FailedPrecondition):
        fleetd.trips.delete_trip(request=fe.DeleteTripRequest(name=t.name), metadata=md)
    fleetd.trips.update_trip(request=fe.UpdateTripRequest(name=t.name, trip=fe.Trip(trip_status=fe.TripStatus.ARRIVED_AT_PICKUP), update_mask=mask("trip_status")), metadata=md)
    with pytest.raises(gx.FailedPrecondition):
        fleetd.trips.update_trip(request=fe.UpdateTripRequest(name=t.name, trip=fe.Trip(trip_status=fe.TripStatus.ENROUTE_TO_PICKUP), update_mask=mask("trip_status")), metadata=md)
    # SearchFuzzedVehicles is deprecated in Fleet Engine (the client no longer has it) and not served.
    raw = fleetd.channel.unary_unary("/maps.fleetengine.v1.VehicleService/SearchFuzzedVehicles")
    with pytest.raises(grpc.RpcError) as error:
        raw(fe.SearchVehiclesRequest.serialize(search_request()), metadata=md)
    assert error.value.code() == grpc.StatusCode.UNIMPLEMENTED


def search_request(**overrides):
    r = dict(parent=P, pickup_point=fe.TerminalLocation(point={"latitude": 43.7384, "longitude": 7.4246}),
             dropoff_point=fe.TerminalLocation(point={"latitude": 43.7396, "longitude": 7.4275}),
             pickup_radius_meters=2000, count=10, minimum_capacity=1, trip_types=[fe.TripType.EXCLUSIVE],
             vehicle_types=[fe.Vehicle.VehicleType(category=fe.Vehicle.VehicleType.Category.AUTO)],
             order_by=fe.SearchVehiclesRequest.VehicleMatchOrder.PICKUP_POINT_ETA)
    r.update(overrides)
    return fe.SearchVehiclesRequest(**r)


def located(lat, lng, **overrides):
    return vehicle(last_location=fe.VehicleLocation(location={"latitude": lat, "longitude": lng}), **overrides)


def test_search_vehicles(fleetd):
    md = fleetd.md()
    attrs = [fe.VehicleAttribute(key="tier", string_value="gold"), fe.VehicleAttribute(key="ev", bool_value=True)]
    for vid, lat, extra in [("near", 43.7394, {}), ("far", 43.7454, {"attributes": attrs}),
                            ("offline", 43.7385, {"vehicle_state": fe.VehicleState.OFFLINE}),
                            ("taxi", 43.7386, {"vehicle_type": fe.Vehicle.VehicleType(category=fe.Vehicle.VehicleType.Category.TAXI)}),
                            ("small", 43.7387, {"maximum_capacity": 1}), ("outside", 43.7700, {})]:
        fleetd.vehicles.create_vehicle(request=fe.CreateVehicleRequest(parent=P, vehicle_id=vid, vehicle=located(lat, 7.4246, **extra)), metadata=md)

    matches = fleetd.vehicles.search_vehicles(request=search_request(minimum_capacity=2), metadata=md).matches
    assert [m.vehicle.name.split("/")[-1] for m in matches] == ["near", "far"]
    first = matches[0]
    # Without a road graph fleetd says it ordered by straight-line distance.
    assert first.requested_ordered_by == fe.SearchVehiclesRequest.VehicleMatchOrder.PICKUP_POINT_ETA
    assert first.ordered_by == fe.SearchVehiclesRequest.VehicleMatchOrder.PICKUP_POINT_STRAIGHT_DISTANCE
    assert first.vehicle_pickup_straight_line_distance_meters == pytest.approx(111, abs=2)
    assert first.vehicle_pickup_eta and first.vehicle_dropoff_eta
    assert first.vehicle_match_type == fe.VehicleMatch.VehicleMatchType.EXCLUSIVE
    assert first.trip_type == fe.TripType.EXCLUSIVE
    assert len(first.vehicle_trips_waypoints) == 3

    def ids(**overrides):
        return [m.vehicle.name.split("/")[-1] for m in fleetd.vehicles.search_vehicles(request=search_request(**overrides), metadata=md).matches]

    assert ids(filter='attributes.tier = "gold" AND attributes.ev = "true"') == ["far"]
    assert ids(required_attributes=[fe.VehicleAttribute(key="tier", string_value="gold")]) == ["far"]
    assert ids(required_one_of_attribute_sets=[fe.VehicleAttributeList(attributes=attrs)]) == ["far"]
    assert ids(vehicle_types=[fe.Vehicle.VehicleType(category=fe.Vehicle.VehicleType.Category.TAXI)]) == ["taxi"]
    assert ids(count=1, order_by=fe.SearchVehiclesRequest.VehicleMatchOrder.COST) == ["small"]

    # A rider's app may look for nearby cars; a driver's may not.
    assert fleetd.vehicles.search_vehicles(request=search_request(), metadata=fleetd.md(role="consumer")).matches
    with pytest.raises(gx.PermissionDenied):
        fleetd.vehicles.search_vehicles(request=search_request(), metadata=fleetd.md(role="driver", vehicle="near"))




def test_search_vehicles_by_road(monaco_graph):
    server = Fleetd(extra=["--graph", monaco_graph]).start()
    try:
        md = server.md()
        spots = {"port": (43.7352, 7.4214), "palace": (43.7313, 7.4197), "casino": (43.7398, 7.4268),
                 "larvotto": (43.7449, 7.4344)}
        for vid, (lat, lng) in spots.items():
            server.vehicles.create_vehicle(request=fe.CreateVehicleRequest(parent=P, vehicle_id=vid, vehicle=located(lat, lng)), metadata=md)
        by_eta = server.vehicles.search_vehicles(request=search_request(pickup_radius_meters=3000), metadata=md).matches
        assert len(by_eta) == 4
        etas = [m.vehicle_pickup_eta.timestamp() for m in by_eta]
        assert etas == sorted(etas)
        for m in by_eta:
            assert m.ordered_by == fe.SearchVehiclesRequest.VehicleMatchOrder.PICKUP_POINT_ETA
            # A drive is never shorter than the straight line.
            assert m.vehicle_pickup_distance_meters >= m.vehicle_pickup_straight_line_distance_meters - 30
            assert m.vehicle_dropoff_eta.timestamp() > m.vehicle_pickup_eta.timestamp()
            assert m.vehicle_pickup_to_dropoff_distance_meters > 0
        by_distance = server.vehicles.search_vehicles(request=search_request(
            pickup_radius_meters=3000, order_by=fe.SearchVehiclesRequest.VehicleMatchOrder.PICKUP_POINT_DISTANCE), metadata=md).matches
        distances = [m.vehicle_pickup_distance_meters for m in by_distance]
        assert distances == sorted(distances)
    finally:
        server.stop()


def test_search_vehicles_rules_are_invalid_argument(fleetd):
    md = fleetd.md()
    shared = [fe.TripType.SHARED]
    cases = [
        (dict(pickup_point=None), "pickup_point is required"),
        (dict(pickup_radius_meters=399), "pickup_radius_meters"),
        (dict(pickup_radius_meters=10001), "pickup_radius_meters"),
        (dict(count=0), "count"),
        (dict(count=51), "count"),
        (dict(minimum_capacity=0), "minimum_capacity"),
        (dict(trip_types=[]), "trip_types"),
        (dict(trip_types=[fe.TripType.EXCLUSIVE, fe.TripType.SHARED]), "trip_types"),
        (dict(vehicle_types=[]), "vehicle_types"),
        (dict(vehicle_types=[fe.Vehicle.VehicleType(category=fe.Vehicle.VehicleType.Category.UNKNOWN)]), "vehicle_types[0].category"),
        (dict(order_by=fe.SearchVehiclesRequest.VehicleMatchOrder.UNKNOWN_VEHICLE_MATCH_ORDER), "order_by"),
        (dict(order_by=fe.SearchVehiclesRequest.VehicleMatchOrder.DROPOFF_POINT_ETA, dropoff_point=None), "dropoff_point"),
        (dict(trip_types=shared, current_trips_present=fe.SearchVehiclesRequest.CurrentTripsPresent.ANY, dropoff_point=None), "dropoff_point"),
        (dict(trip_types=shared), "current_trips_present"),
        (dict(include_back_to_back=True, current_trips_present=fe.SearchVehiclesRequest.CurrentTripsPresent.NONE), "include_back_to_back"),
        (dict(maximum_staleness=duration_pb2.Duration(seconds=-1)), "maximum_staleness"),
        (dict(filter='attributes.a = "b"', required_attributes=[fe.VehicleAttribute(key="a", string_value="b")]), "filter"),
        (dict(filter="attributes.a >"), "filter: at position 14"),
    ]
    for overrides, fragment in cases:
        with pytest.raises(gx.InvalidArgument) as error:
            fleetd.vehicles.search_vehicles(request=search_request(**overrides), metadata=md)
        assert fragment in error.value.message, (overrides, error.value.message)


def test_list_vehicles_filter(fleetd):
    md = fleetd.md()
    for vid, tier in [("a", "gold"), ("b", "silver"), ("c", None)]:
        attributes = [fe.VehicleAttribute(key="tier", string_value=tier)] if tier else []
        fleetd.vehicles.create_vehicle(request=fe.CreateVehicleRequest(parent=P, vehicle_id=vid, vehicle=vehicle(attributes=attributes)), metadata=md)
    auto = [fe.Vehicle.VehicleType.Category.AUTO]

    def listed(flt, **extra):
        pager = fleetd.vehicles.list_vehicles(request=fe.ListVehiclesRequest(parent=P, vehicle_type_categories=auto, filter=flt, **extra), metadata=md)
        return [v.name.split("/")[-1] for v in pager]

    assert listed('attributes.tier = "gold"') == ["a"]
    assert listed('attributes.tier = "gold" OR attributes.tier = "silver"') == ["a", "b"]
    assert listed('NOT attributes.tier = "gold"') == ["b", "c"]
    assert listed('-(attributes.tier = "gold" OR attributes.tier = "silver")') == ["c"]
    assert listed("") == ["a", "b", "c"]
    for bad, fragment in [("attributes.tier = ", "filter: at position 19"), ("vehicle_state = ONLINE", "only vehicle attributes"),
                          (" OR ".join(f'attributes.k{i} = "v"' for i in range(51)), "at most 50 restrictions"),
                          ('attributes.tier = gold AND (', "expected a restriction")]:
        with pytest.raises(gx.InvalidArgument) as error:
            listed(bad)
        assert fragment in error.value.message, error.value.message
    with pytest.raises(gx.InvalidArgument) as error:
        listed('attributes.tier = "gold"', required_attributes=["tier:gold"])
    assert "filter cannot be combined" in error.value.message


def test_roles_and_permission_denied(fleetd):
    md = fleetd.md()
    fleetd.vehicles.create_vehicle(request=fe.CreateVehicleRequest(parent=P, vehicle_id="car", vehicle=vehicle()), metadata=md)
    fleetd.trips.create_trip(request=fe.CreateTripRequest(parent=P, trip_id="mine", trip=trip("car")), metadata=md)
    fleetd.trips.create_trip(request=fe.CreateTripRequest(parent=P, trip_id="other", trip=trip()), metadata=md)

    consumer = fleetd.md(role="consumer", trip="mine")
    seen = fleetd.trips.get_trip(request=fe.GetTripRequest(name=f"{P}/trips/mine"), metadata=consumer)
    assert seen.view == fe.TripView.JOURNEY_SHARING_V1S
    with pytest.raises(gx.PermissionDenied):
        fleetd.trips.get_trip(request=fe.GetTripRequest(name=f"{P}/trips/other"), metadata=consumer)
    with pytest.raises(gx.PermissionDenied):
        fleetd.vehicles.get_vehicle(request=fe.GetVehicleRequest(name=f"{P}/vehicles/car"), metadata=consumer)

    driver = fleetd.md(role="driver", vehicle="car")
    fleetd.vehicles.update_vehicle(request=fe.UpdateVehicleRequest(name=f"{P}/vehicles/car", vehicle=fe.Vehicle(
        last_location=fe.VehicleLocation(location={"latitude": 43.73, "longitude": 7.42})), update_mask=mask("last_location")), metadata=driver)
    fleetd.trips.update_trip(request=fe.UpdateTripRequest(name=f"{P}/trips/mine", trip=fe.Trip(trip_status=fe.TripStatus.ENROUTE_TO_PICKUP), update_mask=mask("trip_status")), metadata=driver)
    with pytest.raises(gx.PermissionDenied):
        fleetd.trips.get_trip(request=fe.GetTripRequest(name=f"{P}/trips/other"), metadata=driver)
    with pytest.raises(gx.PermissionDenied):
        fleetd.vehicles.create_vehicle(request=fe.CreateVehicleRequest(parent=P, vehicle_id="x", vehicle=vehicle()), metadata=driver)
    with pytest.raises(gx.PermissionDenied):
        fleetd.vehicles.get_vehicle(request=fe.GetVehicleRequest(name=f"{P}/vehicles/car"), metadata=fleetd.md(role="driver", vehicle="else"))

    viewer = fleetd.md(role="viewer")
    assert fleetd.trips.get_trip(request=fe.GetTripRequest(name=f"{P}/trips/other"), metadata=viewer).name.endswith("other")
    with pytest.raises(gx.PermissionDenied):
        fleetd.trips.delete_trip(request=fe.DeleteTripRequest(name=f"{P}/trips/other"), metadata=viewer)
    with pytest.raises(gx.PermissionDenied):
        fleetd.trips.get_trip(request=fe.GetTripRequest(name=f"{P}/trips/other"), metadata=fleetd.md(role="admin", provider="someone-else"))


def test_unauthenticated(fleetd):
    name = fe.GetTripRequest(name=f"{P}/trips/x")
    good = fleetd.token()
    header, claims, _ = good.split(".")
    none = base64.urlsafe_b64encode(json.dumps({"alg": "none", "typ": "JWT"}).encode()).decode().rstrip("=")
    hs256 = base64.urlsafe_b64encode(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "x"}).encode()).decode().rstrip("=")
    bad_tokens = [
        None, "garbage", f"{none}.{claims}.", f"{hs256}.{claims}.c2ln", good[:-4] + "AAAA",
        fleetd.token(lifetime=60, now=time.time() - 7200),          # expired
        fleetd.token(now=time.time() + 3600),                      # iat beyond the 10-minute skew
        fleetd.token(lifetime=7200),                               # exp more than an hour ahead
        fleetd.token(aud="https://example.com/"),                  # wrong audience
    ]
    for token in bad_tokens:
        md = [("authorization", f"Bearer {token}")] if token else []
        with pytest.raises(gx.Unauthenticated):
            fleetd.trips.get_trip(request=name, metadata=md)
    # A key that fleetd does not know.
    stranger = Fleetd()
    stranger.add_key("admin")
    with pytest.raises(gx.Unauthenticated):
        fleetd.trips.get_trip(request=name, metadata=[("authorization", "Bearer " + stranger.token())])


def test_resource_exhausted():
    # One instance: how several share a quota is test_instances.py's.
    server = Fleetd(extra=["--quota", "read=3"], instances=1).start()
    try:
        md = server.md()
        for _ in range(3):
            with pytest.raises(gx.NotFound):
                server.trips.get_trip(request=fe.GetTripRequest(name=f"{P}/trips/x"), metadata=md)
        with pytest.raises(gx.ResourceExhausted) as error:
            server.trips.get_trip(request=fe.GetTripRequest(name=f"{P}/trips/x"), metadata=md, retry=None)
        assert "retry in" in error.value.message
    finally:
        server.stop()


def test_deadline_exceeded(fleetd):
    with pytest.raises(gx.DeadlineExceeded):
        fleetd.trips.search_trips(request=fe.SearchTripsRequest(parent=P), metadata=fleetd.md(), timeout=0.000001, retry=None)


def test_acknowledged_writes_survive_kill_9():
    server = Fleetd().start()
    md = server.md()
    acknowledged = []
    for i in range(50):
        server.vehicles.create_vehicle(request=fe.CreateVehicleRequest(parent=P, vehicle_id=f"v{i}", vehicle=vehicle()), metadata=md)
        server.vehicles.update_vehicle(request=fe.UpdateVehicleRequest(name=f"{P}/vehicles/v{i}", vehicle=fe.Vehicle(
            last_location=fe.VehicleLocation(location={"latitude": 43.7 + i / 1000, "longitude": 7.4})),
            update_mask=mask("last_location")), metadata=md)
        acknowledged.append(i)
    server.kill(sig_kill=True)  # SIGKILL right after the last acknowledged response
    restarted = Fleetd(data_dir=server.data_dir)
    restarted.keys = server.keys
    restarted.start()
    try:
        for i in acknowledged:
            v = restarted.vehicles.get_vehicle(request=fe.GetVehicleRequest(name=f"{P}/vehicles/v{i}"), metadata=md)
            assert v.last_location.location.latitude == pytest.approx(43.7 + i / 1000)
    finally:
        restarted.stop()


def test_sigterm_shuts_down_gracefully():
    server = Fleetd().start()
    server.vehicles.create_vehicle(request=fe.CreateVehicleRequest(parent=P, vehicle_id="v", vehicle=vehicle()), metadata=server.md())
    for instance in server.instances:
        instance.process.terminate()
    for instance in server.instances:
        assert instance.process.wait(timeout=20) == 0
    server.channel.close()
