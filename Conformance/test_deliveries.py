"""Google's published Deliveries client (google-maps-fleetengine-delivery), unchanged, against
fleetd: every DeliveryService RPC over gRPC and REST, the rules Google documents for tasks, stops
and assignment, the delivery roles and their claims, and durability across kill -9."""
import time
import urllib.error

import pytest
from google.api_core import exceptions as gx
from google.auth.credentials import AnonymousCredentials
from google.maps import fleetengine_delivery_v1 as fd
from google.maps.fleetengine_delivery_v1.services.delivery_service.transports import DeliveryServiceRestTransport
from google.protobuf import duration_pb2, timestamp_pb2

from conftest import P, Fleetd, mask

DEPOT = {"latitude": 43.7347, "longitude": 7.4206}
STOP_A = {"latitude": 43.7384, "longitude": 7.4246}
STOP_B = {"latitude": 43.7396, "longitude": 7.4275}


def seconds(n):
    return duration_pb2.Duration(seconds=n)


def shipment(kind=fd.Task.Type.DELIVERY, tracking="ship-1", where=STOP_A, **more):
    t = dict(type_=kind, state=fd.Task.State.OPEN, task_duration=seconds(120))
    if tracking:
        t["tracking_id"] = tracking
    if where:
        t["planned_location"] = fd.LocationInfo(point=where)
    t.update(more)
    return fd.Task(**t)


def stop(where, *task_ids, state=fd.VehicleStop.State.NEW):
    return fd.VehicleJourneySegment(stop=fd.VehicleStop(
        planned_location=fd.LocationInfo(point=where), state=state,
        tasks=[fd.VehicleStop.TaskInfo(task_id=t) for t in task_ids]))


def create_task(fleetd, task_id, task, md):
    return fleetd.deliveries.create_task(request=fd.CreateTaskRequest(parent=P, task_id=task_id, task=task), metadata=md)


def set_stops(fleetd, vehicle_id, segments, md):
    return fleetd.deliveries.update_delivery_vehicle(request=fd.UpdateDeliveryVehicleRequest(
        delivery_vehicle=fd.DeliveryVehicle(name=f"{P}/deliveryVehicles/{vehicle_id}",
                                            remaining_vehicle_journey_segments=segments),
        update_mask=mask("remaining_vehicle_journey_segments")), metadata=md)


def get_task(fleetd, task_id, md):
    return fleetd.deliveries.get_task(request=fd.GetTaskRequest(name=f"{P}/tasks/{task_id}"), metadata=md)


def test_a_delivery_day_through_every_rpc(fleetd):
    md = fleetd.md(role="deliveryadmin")
    van = fleetd.deliveries.create_delivery_vehicle(request=fd.CreateDeliveryVehicleRequest(
        parent=P, delivery_vehicle_id="van-1", delivery_vehicle=fd.DeliveryVehicle(
            last_location=fd.DeliveryVehicleLocation(location=DEPOT),
            attributes=[fd.DeliveryVehicleAttribute(key="zone", string_value="north")])), metadata=md)
    assert van.name == f"{P}/deliveryVehicles/van-1"
    assert van.type_ == fd.DeliveryVehicle.DeliveryVehicleType.AUTO  # the default
    assert van.last_location.server_time

    create_task(fleetd, "pickup-1", shipment(fd.Task.Type.PICKUP, tracking="ship-1", where=DEPOT), md)
    made = fleetd.deliveries.batch_create_tasks(request=fd.BatchCreateTasksRequest(parent=P, requests=[
        fd.CreateTaskRequest(task_id="deliver-1", task=shipment(tracking="ship-1", where=STOP_A)),
        fd.CreateTaskRequest(parent=P, task_id="deliver-2", task=shipment(tracking="ship-2", where=STOP_B)),
        fd.CreateTaskRequest(task_id="lunch", task=shipment(fd.Task.Type.UNAVAILABLE, tracking=None, where=None,
                                                             task_duration=seconds(1800))),
    ]), metadata=md)
    assert [t.name for t in made.tasks] == [f"{P}/tasks/deliver-1", f"{P}/tasks/deliver-2", f"{P}/tasks/lunch"]
    assert all(t.state == fd.Task.State.OPEN and not t.delivery_vehicle_id for t in made.tasks)

    # Assigning: the stops name the tasks, which then belong to the van.
    van = set_stops(fleetd, "van-1", [stop(DEPOT, "pickup-1", state=fd.VehicleStop.State.ENROUTE),
                                      stop(STOP_A, "deliver-1"), stop(STOP_B, "deliver-2")], md)
    assert [len(s.stop.tasks) for s in van.remaining_vehicle_journey_segments] == [1, 1, 1]
    assert van.remaining_vehicle_journey_segments[1].stop.tasks[0].task_duration.seconds == 120
    assert van.remaining_vehicle_journey_segments[1].driving_distance_meters > 0
    delivered = get_task(fleetd, "deliver-1", md)
    assert delivered.delivery_vehicle_id == "van-1"
    # Journey sharing: the van's way to this task's stop, the other stops' details left out.
    journey = delivered.journey_sharing_info.remaining_vehicle_journey_segments
    assert len(journey) == 2 and not journey[0].stop.tasks
    assert delivered.journey_sharing_info.last_location.location.latitude == pytest.approx(DEPOT["latitude"])

    # The pickup is made: ARRIVED, its outcome, then its stop removed, which closes it.
    set_stops(fleetd, "van-1", [stop(DEPOT, "pickup-1", state=fd.VehicleStop.State.ARRIVED),
                                stop(STOP_A, "deliver-1"), stop(STOP_B, "deliver-2")], md)
    outcome = fleetd.deliveries.update_task(request=fd.UpdateTaskRequest(
        task=fd.Task(name=f"{P}/tasks/pickup-1", task_outcome=fd.Task.TaskOutcome.SUCCEEDED),
        update_mask=mask("task_outcome")), metadata=md)
    assert outcome.state == fd.Task.State.OPEN and outcome.task_outcome == fd.Task.TaskOutcome.SUCCEEDED
    assert outcome.task_outcome_time
    # No location given: the van's last location, and fleetd says where it came from.
    assert outcome.task_outcome_location.point.latitude == pytest.approx(DEPOT["latitude"])
    assert outcome.task_outcome_location_source == fd.Task.TaskOutcomeLocationSource.LAST_VEHICLE_LOCATION
    set_stops(fleetd, "van-1", [stop(STOP_A, "deliver-1", state=fd.VehicleStop.State.ENROUTE),
                                stop(STOP_B, "deliver-2")], md)
    closed = get_task(fleetd, "pickup-1", md)
    assert closed.state == fd.Task.State.CLOSED and "journey_sharing_info" not in closed

    # The shipment's tracking: one of two tasks with ship-1 (the open delivery) is shown.
    info = fleetd.deliveries.get_task_tracking_info(request=fd.GetTaskTrackingInfoRequest(
        name=f"{P}/taskTrackingInfo/ship-1"), metadata=md)
    assert info.tracking_id == "ship-1" and info.state == fd.Task.State.OPEN
    assert info.remaining_stop_count == 1
    assert info.planned_location.point.latitude == pytest.approx(STOP_A["latitude"])
    assert info.estimated_arrival_time and info.estimated_task_completion_time
    assert info.remaining_driving_distance_meters > 0

    listed = fleetd.deliveries.list_tasks(request=fd.ListTasksRequest(
        parent=P, filter='state = OPEN AND delivery_vehicle_id = "van-1"'), metadata=md)
    assert sorted(t.name.rsplit("/", 1)[1] for t in listed.tasks) == ["deliver-1", "deliver-2"]
    assert listed.total_size == 2
    by_tracking = fleetd.deliveries.list_tasks(request=fd.ListTasksRequest(parent=P, filter='tracking_id = "ship-1"'), metadata=md)
    assert sorted(t.name.rsplit("/", 1)[1] for t in by_tracking.tasks) == ["deliver-1", "pickup-1"]

    vans = fleetd.deliveries.list_delivery_vehicles(request=fd.ListDeliveryVehiclesRequest(
        parent=P, filter='attributes.zone = "north"'), metadata=md)
    assert [v.name for v in vans.delivery_vehicles] == [van.name]
    # Lists leave the stops out (Fleet Engine: they would make the response too large).
    assert list(vans.delivery_vehicles[0].remaining_vehicle_journey_segments) == []

    with pytest.raises(gx.FailedPrecondition, match="OPEN tasks"):
        fleetd.deliveries.delete_delivery_vehicle(request=fd.DeleteDeliveryVehicleRequest(name=van.name), metadata=md)
    with pytest.raises(gx.FailedPrecondition, match="OPEN and assigned"):
        fleetd.deliveries.delete_task(request=fd.DeleteTaskRequest(name=f"{P}/tasks/deliver-1"), metadata=md)
    fleetd.deliveries.delete_task(request=fd.DeleteTaskRequest(name=f"{P}/tasks/lunch"), metadata=md)
    with pytest.raises(gx.NotFound):
        get_task(fleetd, "lunch", md)
    set_stops(fleetd, "van-1", [], md)
    assert get_task(fleetd, "deliver-2", md).state == fd.Task.State.CLOSED
    fleetd.deliveries.delete_delivery_vehicle(request=fd.DeleteDeliveryVehicleRequest(name=van.name), metadata=md)
    with pytest.raises(gx.NotFound):
        fleetd.deliveries.get_delivery_vehicle(request=fd.GetDeliveryVehicleRequest(name=van.name), metadata=md)


@pytest.mark.parametrize("task, field", [
    (shipment(tracking=None), "tracking_id is required for DELIVERY"),
    (shipment(fd.Task.Type.PICKUP, tracking=None), "tracking_id is required for PICKUP"),
    (shipment(fd.Task.Type.SCHEDULED_STOP, tracking="x"), "tracking_id must not be set for SCHEDULED_STOP"),
    (shipment(fd.Task.Type.UNAVAILABLE, tracking="x", where=None), "tracking_id must not be set for UNAVAILABLE"),
    (shipment(where=None), "planned_location is required for DELIVERY"),
    (shipment(fd.Task.Type.SCHEDULED_STOP, tracking=None, where=None), "planned_location is required for SCHEDULED_STOP"),
    (shipment(type_=fd.Task.Type.TYPE_UNSPECIFIED), "task.type is required"),
    (shipment(state=fd.Task.State.CLOSED), "task.state is required and must be OPEN"),
    (fd.Task(type_=fd.Task.Type.DELIVERY, state=fd.Task.State.OPEN, tracking_id="x",
             planned_location=fd.LocationInfo(point=STOP_A)), "task.task_duration is required"),
    (shipment(task_outcome=fd.Task.TaskOutcome.SUCCEEDED), "task.task_outcome must not be set on CreateTask"),
    (shipment(delivery_vehicle_id="van-1"), "task.delivery_vehicle_id must not be set on CreateTask"),
    (shipment(task_duration=seconds(-5)), "task.task_duration must be a non-negative duration"),
    (shipment(planned_location=fd.LocationInfo(point={"latitude": 91, "longitude": 0})), "planned_location.point.latitude"),
])
def test_create_task_refuses_what_google_documents(fleetd, task, field):
    with pytest.raises(gx.InvalidArgument, match=field):
        create_task(fleetd, "t", task, fleetd.md())


def test_create_delivery_vehicle_takes_only_type_location_and_attributes(fleetd):
    md = fleetd.md()
    with pytest.raises(gx.InvalidArgument, match="delivery_vehicle.remaining_vehicle_journey_segments must not be set"):
        fleetd.deliveries.create_delivery_vehicle(request=fd.CreateDeliveryVehicleRequest(
            parent=P, delivery_vehicle_id="van", delivery_vehicle=fd.DeliveryVehicle(
                remaining_vehicle_journey_segments=[stop(STOP_A, "t")])), metadata=md)
    with pytest.raises(gx.InvalidArgument, match="delivery_vehicle_id must not contain '/'"):
        fleetd.deliveries.create_delivery_vehicle(request=fd.CreateDeliveryVehicleRequest(
            parent=P, delivery_vehicle_id="a/b"), metadata=md)
    # Nothing to set: the vehicle may be left out.
    made = fleetd.deliveries.create_delivery_vehicle(request=fd.CreateDeliveryVehicleRequest(
        parent=P, delivery_vehicle_id="van"), metadata=md)
    assert made.type_ == fd.DeliveryVehicle.DeliveryVehicleType.AUTO
    with pytest.raises(gx.AlreadyExists):
        fleetd.deliveries.create_delivery_vehicle(request=fd.CreateDeliveryVehicleRequest(
            parent=P, delivery_vehicle_id="van"), metadata=md)


def test_stops_assign_tasks_by_google_rules(fleetd):
    md = fleetd.md()
    for van in ("van-1", "van-2"):
        fleetd.deliveries.create_delivery_vehicle(request=fd.CreateDeliveryVehicleRequest(parent=P, delivery_vehicle_id=van), metadata=md)
    create_task(fleetd, "a", shipment(tracking="s-a"), md)
    create_task(fleetd, "b", shipment(tracking="s-b", where=STOP_B), md)
    with pytest.raises(gx.NotFound, match="tasks/missing not found"):
        set_stops(fleetd, "van-1", [stop(STOP_A, "missing")], md)
    with pytest.raises(gx.InvalidArgument, match=r"\[1\].stop.state must be NEW"):
        set_stops(fleetd, "van-1", [stop(STOP_A, "a"), stop(STOP_B, "b", state=fd.VehicleStop.State.ENROUTE)], md)
    with pytest.raises(gx.InvalidArgument, match="on the list twice"):
        set_stops(fleetd, "van-1", [stop(STOP_A, "a"), stop(STOP_B, "a")], md)
    with pytest.raises(gx.InvalidArgument, match=r"\[0\].stop.tasks is required"):
        set_stops(fleetd, "van-1", [stop(STOP_A)], md)
    # A refused list changes nothing.
    assert get_task(fleetd, "a", md).delivery_vehicle_id == ""

    set_stops(fleetd, "van-1", [stop(STOP_A, "a"), stop(STOP_B, "b")], md)
    with pytest.raises(gx.FailedPrecondition, match="assigned to delivery vehicle 'van-1'"):
        set_stops(fleetd, "van-2", [stop(STOP_A, "a")], md)
    # Reordering keeps both open; dropping one closes it, and it cannot come back.
    set_stops(fleetd, "van-1", [stop(STOP_B, "b"), stop(STOP_A, "a")], md)
    assert get_task(fleetd, "a", md).state == fd.Task.State.OPEN
    set_stops(fleetd, "van-1", [stop(STOP_B, "b")], md)
    assert get_task(fleetd, "a", md).state == fd.Task.State.CLOSED
    with pytest.raises(gx.FailedPrecondition, match="CLOSED"):
        set_stops(fleetd, "van-1", [stop(STOP_B, "b"), stop(STOP_A, "a")], md)


def test_update_task_rules(fleetd):
    md = fleetd.md()
    fleetd.deliveries.create_delivery_vehicle(request=fd.CreateDeliveryVehicleRequest(parent=P, delivery_vehicle_id="van"), metadata=md)
    create_task(fleetd, "on-van", shipment(tracking="s1"), md)
    create_task(fleetd, "loose", shipment(tracking="s2"), md)
    set_stops(fleetd, "van", [stop(STOP_A, "on-van")], md)

    def update(task_id, paths, **fields):
        return fleetd.deliveries.update_task(request=fd.UpdateTaskRequest(
            task=fd.Task(name=f"{P}/tasks/{task_id}", **fields), update_mask=mask(*paths)), metadata=md)

    with pytest.raises(gx.InvalidArgument, match="update_mask cannot be empty"):
        update("loose", [])
    for path, fields in [("tracking_id", dict(tracking_id="other")), ("type", dict(type_=fd.Task.Type.PICKUP)),
                         ("planned_location", dict(planned_location=fd.LocationInfo(point=STOP_B))),
                         ("task_duration", dict(task_duration=seconds(5)))]:
        with pytest.raises(gx.InvalidArgument, match=f"task.{path} is maintained by the server"):
            update("loose", [path], **fields)
    # Fields outside the mask are ignored, as Fleet Engine does (Google's sample sends the whole task).
    kept = update("loose", ["attributes"], tracking_id="ignored", attributes=[fd.TaskAttribute(key="fragile", bool_value=True)])
    assert kept.tracking_id == "s2" and kept.attributes[0].key == "fragile"
    with pytest.raises(gx.FailedPrecondition, match="remove its stop"):
        update("on-van", ["state"], state=fd.Task.State.CLOSED)
    where = {"latitude": 43.73, "longitude": 7.42}
    failed = update("loose", ["task_outcome", "task_outcome_location"], task_outcome=fd.Task.TaskOutcome.FAILED,
                    task_outcome_location=fd.LocationInfo(point=where))
    assert failed.task_outcome_location_source == fd.Task.TaskOutcomeLocationSource.PROVIDER
    with pytest.raises(gx.FailedPrecondition, match="already has outcome FAILED"):
        update("loose", ["task_outcome"], task_outcome=fd.Task.TaskOutcome.SUCCEEDED)
    assert update("loose", ["state"], state=fd.Task.State.CLOSED).state == fd.Task.State.CLOSED
    with pytest.raises(gx.FailedPrecondition, match="cannot be reopened"):
        update("loose", ["state"], state=fd.Task.State.OPEN)
    window = fd.TimeWindow(start_time=timestamp_pb2.Timestamp(seconds=2_000_000_000),
                           end_time=timestamp_pb2.Timestamp(seconds=1_999_999_000))
    with pytest.raises(gx.InvalidArgument, match="start_time must not be after end_time"):
        update("on-van", ["target_time_window"], target_time_window=window)


def test_batch_create_is_all_or_nothing(fleetd):
    md = fleetd.md()
    create_task(fleetd, "exists", shipment(), md)
    with pytest.raises(gx.AlreadyExists):
        fleetd.deliveries.batch_create_tasks(request=fd.BatchCreateTasksRequest(parent=P, requests=[
            fd.CreateTaskRequest(task_id="new-1", task=shipment()),
            fd.CreateTaskRequest(task_id="exists", task=shipment())]), metadata=md)
    with pytest.raises(gx.NotFound):
        get_task(fleetd, "new-1", md)
    with pytest.raises(gx.InvalidArgument, match=r"requests\[0\].parent must be empty or"):
        fleetd.deliveries.batch_create_tasks(request=fd.BatchCreateTasksRequest(parent=P, requests=[
            fd.CreateTaskRequest(parent="providers/other", task_id="x", task=shipment())]), metadata=md)
    with pytest.raises(gx.InvalidArgument, match="at most 500"):
        fleetd.deliveries.batch_create_tasks(request=fd.BatchCreateTasksRequest(parent=P, requests=[
            fd.CreateTaskRequest(task_id=f"t{i}", task=shipment()) for i in range(501)]), metadata=md)
    with pytest.raises(gx.InvalidArgument, match=r"requests\[1\].task.tracking_id is required"):
        fleetd.deliveries.batch_create_tasks(request=fd.BatchCreateTasksRequest(parent=P, requests=[
            fd.CreateTaskRequest(task_id="ok", task=shipment()),
            fd.CreateTaskRequest(task_id="bad", task=shipment(tracking=None))]), metadata=md)


def test_lists_page_and_filter(fleetd):
    md = fleetd.md()
    fleetd.deliveries.batch_create_tasks(request=fd.BatchCreateTasksRequest(parent=P, requests=[
        fd.CreateTaskRequest(task_id=f"t{i:03}", task=shipment(
            fd.Task.Type.PICKUP if i % 3 == 0 else fd.Task.Type.DELIVERY, tracking=f"s{i}",
            attributes=[fd.TaskAttribute(key="size", string_value="big" if i % 2 else "small")]))
        for i in range(150)]), metadata=md)
    first = fleetd.deliveries.list_tasks(request=fd.ListTasksRequest(parent=P), metadata=md)
    # The client's pager follows next_page_token: pages of at most 100.
    assert len(list(first)) == 150 and first.total_size == 150
    page = fleetd.deliveries.list_tasks(request=fd.ListTasksRequest(parent=P, page_size=500), metadata=md)
    assert len(page._response.tasks) == 100 and page._response.next_page_token
    picks = fleetd.deliveries.list_tasks(request=fd.ListTasksRequest(parent=P, filter='type = PICKUP AND attributes.size = "big"'), metadata=md)
    assert sorted(t.name.rsplit("/", 1)[1] for t in picks) == [f"t{i:03}" for i in range(150) if i % 3 == 0 and i % 2]
    # Outcome times compare as times: two tasks closed an hour apart, one found by a range.
    for task_id, when in (("t000", 1_800_000_000), ("t001", 1_800_003_600)):
        fleetd.deliveries.update_task(request=fd.UpdateTaskRequest(
            task=fd.Task(name=f"{P}/tasks/{task_id}", task_outcome=fd.Task.TaskOutcome.SUCCEEDED,
                         task_outcome_time=timestamp_pb2.Timestamp(seconds=when)),
            update_mask=mask("task_outcome", "task_outcome_time")), metadata=md)
    later = fleetd.deliveries.list_tasks(request=fd.ListTasksRequest(
        parent=P, filter='task_outcome_time > "2027-01-15T08:30:00Z" AND task_outcome = SUCCEEDED'), metadata=md)
    assert [t.name.rsplit("/", 1)[1] for t in later] == ["t001"]
    with pytest.raises(gx.InvalidArgument, match="RFC 3339"):
        list(fleetd.deliveries.list_tasks(request=fd.ListTasksRequest(parent=P, filter='task_outcome_time > "soon"'), metadata=md))
    with pytest.raises(gx.InvalidArgument, match="'colour' cannot be filtered"):
        list(fleetd.deliveries.list_tasks(request=fd.ListTasksRequest(parent=P, filter='colour = "red"'), metadata=md))
    with pytest.raises(gx.InvalidArgument, match="page_token was issued for a different query"):
        list(fleetd.deliveries.list_tasks(request=fd.ListTasksRequest(
            parent=P, filter="state = OPEN", page_token=page._response.next_page_token), metadata=md))

    for i, where in enumerate([STOP_A, {"latitude": 48.85, "longitude": 2.35}]):
        fleetd.deliveries.create_delivery_vehicle(request=fd.CreateDeliveryVehicleRequest(
            parent=P, delivery_vehicle_id=f"van-{i}", delivery_vehicle=fd.DeliveryVehicle(
                last_location=fd.DeliveryVehicleLocation(location=where))), metadata=md)
    monaco = fleetd.deliveries.list_delivery_vehicles(request=fd.ListDeliveryVehiclesRequest(
        parent=P, viewport={"low": {"latitude": 43.7, "longitude": 7.3}, "high": {"latitude": 43.8, "longitude": 7.5}}), metadata=md)
    assert [v.name for v in monaco] == [f"{P}/deliveryVehicles/van-0"]
    with pytest.raises(gx.InvalidArgument, match="viewport.low.latitude must not exceed"):
        list(fleetd.deliveries.list_delivery_vehicles(request=fd.ListDeliveryVehiclesRequest(
            parent=P, viewport={"low": {"latitude": 44, "longitude": 7.3}, "high": {"latitude": 43, "longitude": 7.5}}), metadata=md))
    with pytest.raises(gx.InvalidArgument, match="quote the value"):
        list(fleetd.deliveries.list_delivery_vehicles(request=fd.ListDeliveryVehiclesRequest(
            parent=P, filter="attributes.seats = 4"), metadata=md))


def test_roles_and_claims(fleetd):
    admin = fleetd.md(role="deliveryadmin")
    fleetd.deliveries.create_delivery_vehicle(request=fd.CreateDeliveryVehicleRequest(parent=P, delivery_vehicle_id="van-1"), metadata=admin)
    create_task(fleetd, "d1", shipment(tracking="ship-1"), admin)
    set_stops(fleetd, "van-1", [stop(STOP_A, "d1")], admin)
    van = f"{P}/deliveryVehicles/van-1"
    located = fd.DeliveryVehicle(name=van, last_location=fd.DeliveryVehicleLocation(location=STOP_B))

    untrusted = fleetd.md(role="deliveryuntrusteddriver", authorization={"deliveryvehicleid": "van-1"})
    fleetd.deliveries.update_delivery_vehicle(request=fd.UpdateDeliveryVehicleRequest(
        delivery_vehicle=located, update_mask=mask("last_location")), metadata=untrusted)
    assert fleetd.deliveries.get_delivery_vehicle(request=fd.GetDeliveryVehicleRequest(name=van), metadata=untrusted).last_location
    with pytest.raises(gx.PermissionDenied, match="only update the vehicle's location"):
        set_stops(fleetd, "van-1", [], untrusted)
    with pytest.raises(gx.PermissionDenied, match="may not call CreateTask"):
        create_task(fleetd, "d2", shipment(), untrusted)
    other = fleetd.md(role="deliveryuntrusteddriver", authorization={"deliveryvehicleid": "van-2"})
    with pytest.raises(gx.PermissionDenied, match="not 'van-1'"):
        fleetd.deliveries.get_delivery_vehicle(request=fd.GetDeliveryVehicleRequest(name=van), metadata=other)

    trusted = fleetd.md(role="deliverytrusteddriver", authorization={"deliveryvehicleid": "van-1"})
    create_task(fleetd, "d2", shipment(tracking="ship-2"), trusted)
    set_stops(fleetd, "van-1", [stop(STOP_A, "d1"), stop(STOP_B, "d2")], trusted)
    with pytest.raises(gx.PermissionDenied, match="may not call ListTasks"):
        list(fleetd.deliveries.list_tasks(request=fd.ListTasksRequest(parent=P), metadata=trusted))

    reader = fleetd.md(role="deliveryfleetreader")
    assert len(list(fleetd.deliveries.list_tasks(request=fd.ListTasksRequest(parent=P), metadata=reader))) == 2
    with pytest.raises(gx.PermissionDenied, match="may not call UpdateDeliveryVehicle"):
        set_stops(fleetd, "van-1", [], reader)

    consumer = fleetd.md(role="deliveryconsumer", authorization={"trackingid": "ship-1"})
    info = fleetd.deliveries.get_task_tracking_info(request=fd.GetTaskTrackingInfoRequest(
        name=f"{P}/taskTrackingInfo/ship-1"), metadata=consumer)
    assert info.remaining_stop_count == 1
    with pytest.raises(gx.PermissionDenied, match="not 'ship-2'"):
        fleetd.deliveries.get_task_tracking_info(request=fd.GetTaskTrackingInfoRequest(
            name=f"{P}/taskTrackingInfo/ship-2"), metadata=consumer)
    with pytest.raises(gx.PermissionDenied, match="may not call GetTask"):
        get_task(fleetd, "d1", consumer)
    with pytest.raises(gx.NotFound, match="tracking ID 'nobody'"):
        fleetd.deliveries.get_task_tracking_info(request=fd.GetTaskTrackingInfoRequest(
            name=f"{P}/taskTrackingInfo/nobody"), metadata=admin)
    # A rides role has no delivery rights, nor a delivery role rides rights.
    with pytest.raises(gx.PermissionDenied):
        get_task(fleetd, "d1", fleetd.md(role="driver", vehicle="van-1"))
    with pytest.raises(gx.PermissionDenied):
        fleetd.vehicles.get_vehicle(request={"name": f"{P}/vehicles/van-1"}, metadata=admin)


def test_tracking_follows_the_view_config(fleetd):
    md = fleetd.md()
    fleetd.deliveries.create_delivery_vehicle(request=fd.CreateDeliveryVehicleRequest(
        parent=P, delivery_vehicle_id="van", delivery_vehicle=fd.DeliveryVehicle(
            last_location=fd.DeliveryVehicleLocation(location=DEPOT))), metadata=md)
    hidden = fd.TaskTrackingViewConfig(
        vehicle_location_visibility=fd.TaskTrackingViewConfig.VisibilityOption(remaining_stop_count_threshold=1),
        estimated_arrival_time_visibility=fd.TaskTrackingViewConfig.VisibilityOption(never=True))
    create_task(fleetd, "near", shipment(tracking="near"), md)
    create_task(fleetd, "far", shipment(tracking="far", where=STOP_B, task_tracking_view_config=hidden), md)
    set_stops(fleetd, "van", [stop(STOP_A, "near"), stop(STOP_B, "far")], md)

    def info(tracking):
        return fleetd.deliveries.get_task_tracking_info(request=fd.GetTaskTrackingInfoRequest(
            name=f"{P}/taskTrackingInfo/{tracking}"), metadata=md)

    near, far = info("near"), info("far")
    assert near.vehicle_location.location.latitude == pytest.approx(DEPOT["latitude"]) and near.estimated_arrival_time
    # Two stops away: beyond its threshold of one, and never its arrival time.
    assert "vehicle_location" not in far and "estimated_arrival_time" not in far
    assert far.remaining_stop_count == 2 and far.estimated_task_completion_time
    # The van moves: the drive to its first stop is estimated again from where it is.
    before = near.remaining_driving_distance_meters
    halfway = {"latitude": (DEPOT["latitude"] + STOP_A["latitude"]) / 2, "longitude": (DEPOT["longitude"] + STOP_A["longitude"]) / 2}
    fleetd.deliveries.update_delivery_vehicle(request=fd.UpdateDeliveryVehicleRequest(
        delivery_vehicle=fd.DeliveryVehicle(name=f"{P}/deliveryVehicles/van", last_location=fd.DeliveryVehicleLocation(location=halfway)),
        update_mask=mask("last_location")), metadata=md)
    assert 0 < info("near").remaining_driving_distance_meters < before
    # The driver app's own route and what it says is left of it stand for the first drive.
    route = b"_p~iF~ps|U_ulLnnqC"  # Google's polyline example: (38.5, -120.2), (40.7, -120.95)
    fleetd.deliveries.update_delivery_vehicle(request=fd.UpdateDeliveryVehicleRequest(
        delivery_vehicle=fd.DeliveryVehicle(name=f"{P}/deliveryVehicles/van", current_route_segment=route,
                                            remaining_distance_meters=321, remaining_duration=seconds(60)),
        update_mask=mask("current_route_segment", "remaining_distance_meters", "remaining_duration")), metadata=md)
    near = info("near")
    assert near.remaining_driving_distance_meters == 321
    assert [(round(p.latitude, 2), round(p.longitude, 2)) for p in near.route_polyline_points] == [(38.5, -120.2), (40.7, -120.95)]
    with pytest.raises(gx.InvalidArgument, match="always cannot be false"):
        create_task(fleetd, "bad", shipment(tracking="bad", task_tracking_view_config=fd.TaskTrackingViewConfig(
            vehicle_location_visibility=fd.TaskTrackingViewConfig.VisibilityOption(always=False))), md)


def test_the_rest_transport_of_googles_client(fleetd):
    """The same client over Fleet Engine's REST mapping (PATCH updates, camelCase masks and IDs)."""
    rest = fd.DeliveryServiceClient(transport=DeliveryServiceRestTransport(
        host=f"http://127.0.0.1:{fleetd.http_port}", credentials=AnonymousCredentials()))
    md = fleetd.md()
    van = rest.create_delivery_vehicle(request=fd.CreateDeliveryVehicleRequest(
        parent=P, delivery_vehicle_id="van", delivery_vehicle=fd.DeliveryVehicle(type_=fd.DeliveryVehicle.DeliveryVehicleType.BICYCLE)), metadata=md)
    assert van.type_ == fd.DeliveryVehicle.DeliveryVehicleType.BICYCLE
    rest.create_task(request=fd.CreateTaskRequest(parent=P, task_id="t1", task=shipment(tracking="s1")), metadata=md)
    rest.batch_create_tasks(request=fd.BatchCreateTasksRequest(parent=P, requests=[
        fd.CreateTaskRequest(task_id="t2", task=shipment(tracking="s2"))]), metadata=md)
    updated = rest.update_delivery_vehicle(request=fd.UpdateDeliveryVehicleRequest(
        delivery_vehicle=fd.DeliveryVehicle(name=van.name, remaining_vehicle_journey_segments=[stop(STOP_A, "t1", "t2")]),
        update_mask=mask("remaining_vehicle_journey_segments")), metadata=md)
    assert [t.task_id for t in updated.remaining_vehicle_journey_segments[0].stop.tasks] == ["t1", "t2"]
    task = rest.update_task(request=fd.UpdateTaskRequest(
        task=fd.Task(name=f"{P}/tasks/t1", task_outcome=fd.Task.TaskOutcome.SUCCEEDED),
        update_mask=mask("task_outcome")), metadata=md)
    assert task.task_outcome == fd.Task.TaskOutcome.SUCCEEDED and task.delivery_vehicle_id == "van"
    assert rest.get_task(request=fd.GetTaskRequest(name=f"{P}/tasks/t2"), metadata=md).delivery_vehicle_id == "van"
    assert [t.name for t in rest.list_tasks(request=fd.ListTasksRequest(parent=P, filter='tracking_id = "s2"'), metadata=md)] == [f"{P}/tasks/t2"]
    assert [v.name for v in rest.list_delivery_vehicles(request=fd.ListDeliveryVehiclesRequest(parent=P), metadata=md)] == [van.name]
    assert rest.get_task_tracking_info(request=fd.GetTaskTrackingInfoRequest(name=f"{P}/taskTrackingInfo/s1"), metadata=md).remaining_stop_count == 1
    # Over REST, api_core raises 400 as BadRequest (InvalidArgument is gRPC's name for it).
    with pytest.raises(gx.BadRequest, match="tracking_id is required"):
        rest.create_task(request=fd.CreateTaskRequest(parent=P, task_id="t3", task=shipment(tracking=None)), metadata=md)
    rest.update_delivery_vehicle(request=fd.UpdateDeliveryVehicleRequest(
        delivery_vehicle=fd.DeliveryVehicle(name=van.name), update_mask=mask("remaining_vehicle_journey_segments")), metadata=md)
    rest.delete_task(request=fd.DeleteTaskRequest(name=f"{P}/tasks/t1"), metadata=md)
    rest.delete_delivery_vehicle(request=fd.DeleteDeliveryVehicleRequest(name=van.name), metadata=md)


def test_acknowledged_delivery_writes_survive_kill_9():
    server = Fleetd().start()
    try:
        md = server.md()
        server.deliveries.create_delivery_vehicle(request=fd.CreateDeliveryVehicleRequest(parent=P, delivery_vehicle_id="van"), metadata=md)
        server.deliveries.batch_create_tasks(request=fd.BatchCreateTasksRequest(parent=P, requests=[
            fd.CreateTaskRequest(task_id=f"t{i}", task=shipment(tracking=f"s{i}")) for i in range(20)]), metadata=md)
        set_stops(server, "van", [stop(STOP_A, *[f"t{i}" for i in range(10)])], md)
        set_stops(server, "van", [stop(STOP_A, *[f"t{i}" for i in range(5, 10)])], md)
        server.kill(sig_kill=True)
        server.start()
        md = server.md()
        van = server.deliveries.get_delivery_vehicle(request=fd.GetDeliveryVehicleRequest(name=f"{P}/deliveryVehicles/van"), metadata=md)
        assert [t.task_id for t in van.remaining_vehicle_journey_segments[0].stop.tasks] == [f"t{i}" for i in range(5, 10)]
        states = {t.name.rsplit("/", 1)[1]: (t.state, t.delivery_vehicle_id)
                  for t in server.deliveries.list_tasks(request=fd.ListTasksRequest(parent=P), metadata=md)}
        assert states["t0"] == (fd.Task.State.CLOSED, "van")
        assert states["t7"] == (fd.Task.State.OPEN, "van")
        assert states["t15"] == (fd.Task.State.OPEN, "")
        assert len(states) == 20
    finally:
        server.stop()


def test_tracking_is_pushed_as_server_sent_events(fleetd):
    """fleetd's own push of GetTaskTrackingInfo (`…/taskTrackingInfo/{id}:watch`), as a browser's
    EventSource reads it: the info now, after each change that moves it, and the stream's end
    once the task is closed."""
    import http.client
    import json

    md = fleetd.md()
    fleetd.deliveries.create_delivery_vehicle(request=fd.CreateDeliveryVehicleRequest(
        parent=P, delivery_vehicle_id="van", delivery_vehicle=fd.DeliveryVehicle(
            last_location=fd.DeliveryVehicleLocation(location=DEPOT))), metadata=md)
    create_task(fleetd, "parcel", shipment(tracking="ship-9"), md)
    set_stops(fleetd, "van", [stop(STOP_A, "parcel", state=fd.VehicleStop.State.ENROUTE)], md)

    token = fleetd.token(role="deliveryconsumer", authorization={"trackingid": "ship-9"})
    connection = http.client.HTTPConnection("127.0.0.1", fleetd.http_port, timeout=30)
    connection.request("GET", f"/fleetkit/v1/{P}/taskTrackingInfo/ship-9:watch?access_token={token}")
    response = connection.getresponse()
    assert response.status == 200 and response.getheader("Content-Type") == "text/event-stream"

    def next_event():
        name, data = None, None
        while True:
            line = response.readline().decode()
            assert line, "the stream ended"
            if line.startswith("event: "):
                name = line[7:].strip()
            elif line.startswith("data: "):
                data = json.loads(line[6:])
            elif line == "\n" and name:
                return name, data

    name, first = next_event()
    assert name == "taskTrackingInfo" and first["trackingId"] == "ship-9" and first["remainingStopCount"] == 1
    halfway = {"latitude": (DEPOT["latitude"] + STOP_A["latitude"]) / 2, "longitude": (DEPOT["longitude"] + STOP_A["longitude"]) / 2}
    fleetd.deliveries.update_delivery_vehicle(request=fd.UpdateDeliveryVehicleRequest(
        delivery_vehicle=fd.DeliveryVehicle(name=f"{P}/deliveryVehicles/van", last_location=fd.DeliveryVehicleLocation(location=halfway)),
        update_mask=mask("last_location")), metadata=md)
    _, moved = next_event()
    assert moved["vehicleLocation"]["location"]["latitude"] == pytest.approx(halfway["latitude"])
    assert moved["remainingDrivingDistanceMeters"] < first["remainingDrivingDistanceMeters"]
    fleetd.deliveries.update_task(request=fd.UpdateTaskRequest(
        task=fd.Task(name=f"{P}/tasks/parcel", task_outcome=fd.Task.TaskOutcome.SUCCEEDED), update_mask=mask("task_outcome")), metadata=md)
    _, outcome = next_event()
    assert outcome["taskOutcome"] == "SUCCEEDED" and outcome["state"] == "OPEN"
    set_stops(fleetd, "van", [], md)
    _, closed = next_event()
    assert closed["state"] == "CLOSED" and "vehicleLocation" not in closed
    assert response.readline() == b""  # the stream ends with the shipment
    connection.close()

    # Another shipment's stream is refused with Google's error body.
    connection = http.client.HTTPConnection("127.0.0.1", fleetd.http_port, timeout=30)
    connection.request("GET", f"/fleetkit/v1/{P}/taskTrackingInfo/ship-1:watch?access_token={token}")
    refused = connection.getresponse()
    assert refused.status == 403 and json.loads(refused.read())["error"]["status"] == "PERMISSION_DENIED"
    connection.close()


def test_tracking_is_pushed_over_grpc(fleetd):
    """fleetkit.v1.TaskTracking/WatchTaskTrackingInfo on the delivery messages Google's client defines."""
    md = fleetd.md()
    fleetd.deliveries.create_delivery_vehicle(request=fd.CreateDeliveryVehicleRequest(
        parent=P, delivery_vehicle_id="van", delivery_vehicle=fd.DeliveryVehicle(
            last_location=fd.DeliveryVehicleLocation(location=DEPOT))), metadata=md)
    create_task(fleetd, "parcel", shipment(tracking="ship-7"), md)
    set_stops(fleetd, "van", [stop(STOP_A, "parcel")], md)
    watch = fleetd.channel.unary_stream(
        "/fleetkit.v1.TaskTracking/WatchTaskTrackingInfo",
        request_serializer=fd.GetTaskTrackingInfoRequest.serialize, response_deserializer=fd.TaskTrackingInfo.deserialize)
    stream = watch(fd.GetTaskTrackingInfoRequest(name=f"{P}/taskTrackingInfo/ship-7"),
                   metadata=fleetd.md(role="deliveryconsumer", authorization={"trackingid": "ship-7"}))
    first = next(stream)
    assert first.name == f"{P}/taskTrackingInfo/ship-7" and first.remaining_stop_count == 1
    fleetd.deliveries.update_delivery_vehicle(request=fd.UpdateDeliveryVehicleRequest(
        delivery_vehicle=fd.DeliveryVehicle(name=f"{P}/deliveryVehicles/van", last_location=fd.DeliveryVehicleLocation(location=STOP_B)),
        update_mask=mask("last_location")), metadata=md)
    assert next(stream).vehicle_location.location.latitude == pytest.approx(STOP_B["latitude"])
    stream.cancel()
    with pytest.raises(Exception) as refused:
        next(watch(fd.GetTaskTrackingInfoRequest(name=f"{P}/taskTrackingInfo/ship-7"),
                   metadata=fleetd.md(role="deliveryconsumer", authorization={"trackingid": "other"})))
    assert refused.value.code().name == "PERMISSION_DENIED"


def test_stops_are_ordered_and_the_order_applied(fleetd):
    """fleetd's :optimizeStops over REST: a zig-zag day put in a shorter order that keeps a time
    window, measured against the order the stops were given and a lower bound."""
    import json
    import urllib.request

    md = fleetd.md()
    fleetd.deliveries.create_delivery_vehicle(request=fd.CreateDeliveryVehicleRequest(
        parent=P, delivery_vehicle_id="van", delivery_vehicle=fd.DeliveryVehicle(
            last_location=fd.DeliveryVehicleLocation(location=DEPOT))), metadata=md)
    # Along a line east of the depot, given out of order: 3, 1, 4, 2 (km).
    places = {k: {"latitude": DEPOT["latitude"], "longitude": DEPOT["longitude"] + 0.0125 * k} for k in (1, 2, 3, 4)}
    now = int(time.time())
    for k, where in places.items():
        window = {}
        if k == 4:
            # The farthest is due within nine minutes: about eight straight there (4 km at fleetd's
            # 30 km/h without a road graph), ten by way of the nearest stop and its two minutes.
            window = dict(target_time_window=fd.TimeWindow(start_time=timestamp_pb2.Timestamp(seconds=now),
                                                           end_time=timestamp_pb2.Timestamp(seconds=now + 540)))
        create_task(fleetd, f"t{k}", shipment(tracking=f"s{k}", where=where, **window), md)
    set_stops(fleetd, "van", [stop(places[k], f"t{k}") for k in (3, 1, 4, 2)], md)

    def optimize(apply, token=None):
        request = urllib.request.Request(
            f"http://127.0.0.1:{fleetd.http_port}/fleetkit/v1/{P}/deliveryVehicles/van:optimizeStops", method="POST",
            data=json.dumps({"apply": apply}).encode(),
            headers={"authorization": "Bearer " + (token or fleetd.token()), "content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.load(response)

    def seconds_of(text):
        return float(text.rstrip("s"))

    plan = optimize(False)
    order = [s["stop"]["tasks"][0]["taskId"] for s in plan["remainingVehicleJourneySegments"]]
    assert order == ["t4", "t3", "t2", "t1"]  # the window first, then back along the line
    assert plan["optimized"].get("timeWindowViolations", 0) == 0
    assert seconds_of(plan["optimized"]["driveDuration"]) < seconds_of(plan["current"]["driveDuration"])
    assert seconds_of(plan["driveDurationLowerBound"]) <= seconds_of(plan["optimized"]["driveDuration"])
    assert not plan.get("applied")
    van = fleetd.deliveries.get_delivery_vehicle(request=fd.GetDeliveryVehicleRequest(name=f"{P}/deliveryVehicles/van"), metadata=md)
    assert [s.stop.tasks[0].task_id for s in van.remaining_vehicle_journey_segments] == ["t3", "t1", "t4", "t2"]

    applied = optimize(True)
    assert applied["applied"] is True
    van = fleetd.deliveries.get_delivery_vehicle(request=fd.GetDeliveryVehicleRequest(name=f"{P}/deliveryVehicles/van"), metadata=md)
    assert [s.stop.tasks[0].task_id for s in van.remaining_vehicle_journey_segments] == ["t4", "t3", "t2", "t1"]
    assert all(get_task(fleetd, f"t{k}", md).state == fd.Task.State.OPEN for k in places)

    untrusted = fleetd.token(role="deliveryuntrusteddriver", authorization={"deliveryvehicleid": "van"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        optimize(True, untrusted)
    assert refused.value.code == 403
