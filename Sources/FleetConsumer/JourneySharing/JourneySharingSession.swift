import FleetCore
import FleetGeometry
import Foundation

/// The platform-neutral state of a journey-sharing map (Fleet Engine's
/// `GMTCJourneySharingSession`): start it to follow its trip model, ask it for a frame whenever
/// the map redraws (every display refresh, for a smoothly moving vehicle), stop it when the
/// map goes away.
@MainActor
public final class JourneySharingSession: TripModelSubscriber {
  public let tripModel: TripModel
  public var style: JourneySharingStyle
  /// Called after each change of the trip, for maps that redraw only then.
  public var onChange: (@MainActor (JourneySharingSession) -> Void)?
  public private(set) var isActive = false
  public private(set) var trip: TripInfo?

  var animator = MarkerAnimator()
  let now: @Sendable () -> Date

  public init(
    tripModel: TripModel, style: JourneySharingStyle = JourneySharingStyle(),
    now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.tripModel = tripModel
    self.style = style
    self.now = now
  }

  /// Starts following the trip (registers with the trip model).
  public func start() {
    guard !isActive else { return }
    isActive = true
    tripModel.register(self)
  }

  /// Stops following the trip; the last frame stays available.
  public func stop() {
    guard isActive else { return }
    isActive = false
    tripModel.unregister(self)
  }

  public func tripModel(_ tripModel: TripModel, didUpdate trip: TripInfo, updatedPropertyFields: TripPropertyFields) {
    self.trip = trip
    if let vehicle = trip.vehicleLocation,
      !updatedPropertyFields.isDisjoint(with: [.vehicleLocation, .activeRoute])
    {
      animator.update(vehicle: vehicle.coordinate, heading: vehicle.heading, route: trip.activeRoute, at: now())
    }
    onChange?(self)
  }

  /// What to draw at `time`.
  public func frame(at time: Date = Date()) -> JourneySharingFrame {
    guard let trip else {
      return JourneySharingFrame(tripStatus: "UNKNOWN_TRIP_STATUS", polylines: [], markers: [], camera: nil)
    }
    var markers: [MapMarker] = []
    var polylines: [MapPolyline] = []
    let vehicle = trip.hasEnded ? nil : animator.position(at: time)
    if let vehicle {
      markers.append(
        MapMarker(
          type: .tripVehicle, position: vehicle.coordinate, heading: vehicle.heading,
          style: style.markerStyle(.tripVehicle)))
      polylines += lines(.activeRoute, activeRouteAhead(at: time))
    }
    if let remaining = trip.remainingRoute, !trip.hasEnded {
      polylines += lines(.remainingRoute, segments(of: remaining))
    }
    // Stops still ahead only, once the vehicle is on its way: a passed pickup is not drawn.
    let ahead = Set(trip.remainingWaypoints.filter { $0.tripID == trip.tripID }.map(\.type))
    let showAll = trip.remainingWaypoints.isEmpty && !trip.hasEnded
    if let pickup = trip.pickupLocation, showAll || ahead.contains(.pickup) {
      markers.append(
        MapMarker(type: .tripPickupPoint, position: pickup.point, style: style.markerStyle(.tripPickupPoint)))
    }
    for (i, stop) in trip.intermediateDestinations.enumerated()
    where showAll
      || trip.remainingWaypoints.contains(where: { $0.type == .intermediateDestination && $0.location == stop })
    {
      markers.append(
        MapMarker(
          type: .intermediateDestination, position: stop.point, style: style.markerStyle(.intermediateDestination),
          index: i))
    }
    if let dropoff = trip.dropoffLocation, showAll || ahead.contains(.dropOff) || trip.status == .complete {
      markers.append(
        MapMarker(type: .tripDropoffPoint, position: dropoff.point, style: style.markerStyle(.tripDropoffPoint)))
    }
    markers = markers.filter(\.style.isVisible).sorted { $0.style.zIndex < $1.style.zIndex }
    polylines.sort { $0.zIndex < $1.zIndex }

    var focus: [LatLng] = []
    if let vehicle {
      focus.append(vehicle.coordinate)
      if let next = trip.remainingWaypoints.first { focus.append(next.location.point) }
    } else {
      focus = markers.map(\.position)
    }
    return JourneySharingFrame(
      tripStatus: trip.status.wireName, polylines: polylines, markers: markers, camera: bounds(focus))
  }

  /// The active route from the marker on, as stretches of one traffic speed each.
  func activeRouteAhead(at time: Date) -> [(points: [LatLng], speed: TrafficSpeed?)] {
    let path = animator.path
    let start = animator.along(at: time)
    guard path.points.count >= 2, start < path.length else { return [] }
    // Traffic intervals in metres along the marker's path.
    var ranges: [(from: Double, to: Double, speed: TrafficSpeed)] = []
    if let route = animator.route {
      let measured = MeasuredPath(route.points)
      for interval in route.traffic
      where interval.start >= 0 && interval.end < route.points.count && interval.start < interval.end {
        ranges.append(
          (
            animator.routeOffset + measured.along[interval.start], animator.routeOffset + measured.along[interval.end],
            interval.speed
          ))
      }
    }
    return pieces(of: path, from: start, ranges: ranges)
  }

  func segments(of route: TrafficRoute) -> [(points: [LatLng], speed: TrafficSpeed?)] {
    let path = MeasuredPath(route.points)
    let ranges = route.traffic.filter { $0.start >= 0 && $0.end < route.points.count && $0.start < $0.end }
      .map { (from: path.along[$0.start], to: path.along[$0.end], speed: $0.speed) }
    return pieces(of: path, from: 0, ranges: ranges)
  }

  /// `path` from `start` on, cut where the traffic speed changes; stretches no range covers
  /// have no speed.
  func pieces(of path: MeasuredPath, from start: Double, ranges: [(from: Double, to: Double, speed: TrafficSpeed)])
    -> [(points: [LatLng], speed: TrafficSpeed?)]
  {
    guard path.points.count >= 2 else { return [] }
    var cuts = Set([start, path.length])
    for range in ranges {
      for cut in [range.from, range.to] where cut > start && cut < path.length { cuts.insert(cut) }
    }
    let ordered = cuts.sorted()
    var result: [(points: [LatLng], speed: TrafficSpeed?)] = []
    for (a, b) in zip(ordered, ordered.dropFirst()) where b > a {
      let middle = (a + b) / 2
      let speed = ranges.last { $0.from <= middle && middle < $0.to }?.speed
      let points = path.slice(from: a, to: b)
      if let last = result.last, last.speed == speed {
        result[result.count - 1].points += points.dropFirst()
      } else {
        result.append((points, speed))
      }
    }
    return result
  }

  func lines(_ type: PolylineType, _ pieces: [(points: [LatLng], speed: TrafficSpeed?)]) -> [MapPolyline] {
    let style = style.polylineStyle(type)
    guard style.isVisible, !pieces.isEmpty else { return [] }
    if !style.isTrafficEnabled {
      let points = pieces.dropFirst().reduce(pieces[0].points) { $0 + $1.points.dropFirst() }
      return [
        MapPolyline(
          type: type, points: points, color: style.strokeColor, width: style.strokeWidth, zIndex: style.zIndex)
      ]
    }
    return pieces.map {
      MapPolyline(
        type: type, points: $0.points, color: style.trafficColors.color(for: $0.speed), width: style.strokeWidth,
        zIndex: style.zIndex, trafficSpeed: $0.speed)
    }
  }

  func bounds(_ points: [LatLng]) -> Viewport? {
    guard let first = points.first else { return nil }
    var low = first
    var high = first
    for p in points.dropFirst() {
      low = LatLng(latitude: min(low.latitude, p.latitude), longitude: min(low.longitude, p.longitude))
      high = LatLng(latitude: max(high.latitude, p.latitude), longitude: max(high.longitude, p.longitude))
    }
    // Never narrower than about 200 m, so that a vehicle at its waypoint is not a point.
    let padLatitude = max((high.latitude - low.latitude) * style.cameraPadding, 0.001)
    let padLongitude = max((high.longitude - low.longitude) * style.cameraPadding, 0.001)
    return Viewport(
      low: LatLng(latitude: max(-90, low.latitude - padLatitude), longitude: low.longitude - padLongitude),
      high: LatLng(latitude: min(90, high.latitude + padLatitude), longitude: high.longitude + padLongitude))
  }
}
