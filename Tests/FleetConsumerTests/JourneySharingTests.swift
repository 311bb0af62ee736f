import FleetCore
import FleetGeometry
import Foundation
import Testing

@testable import FleetConsumer

@Suite struct MarkerAnimatorTests {
  // A straight street running east, about 800 m.
  static let west = LatLng(latitude: 43.73, longitude: 7.40)
  static let east = LatLng(latitude: 43.73, longitude: 7.41)
  static let metresPerDegree = LatLng.earthRadius * .pi / 180 * cos(43.73 * .pi / 180)

  /// Metres east of the street's start.
  static func along(_ p: LatLng) -> Double { (p.longitude - west.longitude) * metresPerDegree }
  static func point(_ metres: Double, north: Double = 0) -> LatLng {
    LatLng(
      latitude: 43.73 + north / (LatLng.earthRadius * .pi / 180), longitude: west.longitude + metres / metresPerDegree)
  }

  @Test func neverRunsBackwardsAlongTheRoute() {
    var animator = MarkerAnimator()
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    // Reports 5 s apart, 50 m further each time, with noise across and along the street; the
    // fourth is 20 m behind the third (GPS noise), the seventh a repeat.
    let offsets: [Double] = [0, 50, 100, 80, 150, 200, 200, 260, 310, 400]
    var samples: [Double] = []
    for (i, offset) in offsets.enumerated() {
      let time = start.addingTimeInterval(Double(i) * 5)
      let reported = Self.point(offset, north: i % 2 == 0 ? 4 : -4)
      animator.update(
        vehicle: reported, heading: 90, route: TrafficRoute(points: [reported, Self.east]), at: time)
      for step in 0..<50 {
        if let position = animator.position(at: time.addingTimeInterval(Double(step) * 0.1))?.coordinate {
          samples.append(Self.along(position))
        }
      }
    }
    for (a, b) in zip(samples, samples.dropFirst()) { #expect(b >= a - 0.01, "moved back from \(a) to \(b)") }
    // It keeps up: when the animation is over it is where the vehicle was reported.
    let end = animator.position(at: start.addingTimeInterval(Double(offsets.count) * 5))?.coordinate
    #expect(end.map { abs(Self.along($0) - 400) < 1 } == true)
    // And it moves smoothly: no step between two samples 0.1 s apart is longer than a report's gap.
    #expect(zip(samples, samples.dropFirst()).allSatisfy { $1 - $0 < 50 })
  }

  @Test func headingFollowsTheRoute() {
    var animator = MarkerAnimator()
    let now = Date()
    animator.update(vehicle: Self.west, heading: nil, route: TrafficRoute(points: [Self.west, Self.east]), at: now)
    let heading = animator.position(at: now)?.heading
    #expect(heading.map { abs($0 - 90) < 1 } == true, "east along the street, got \(String(describing: heading))")
  }

  @Test func aReportOffTheRouteIsShownAtOnce() {
    var animator = MarkerAnimator()
    let now = Date()
    animator.update(vehicle: Self.west, heading: 90, route: TrafficRoute(points: [Self.west, Self.east]), at: now)
    let elsewhere = Self.point(100, north: 300)
    animator.update(vehicle: elsewhere, heading: 0, route: nil, at: now.addingTimeInterval(5))
    let shown = animator.position(at: now.addingTimeInterval(5))?.coordinate
    #expect(shown.map { $0.distance(to: elsewhere) < 0.5 } == true)
  }
}

@Suite @MainActor struct JourneySharingSessionTests {
  static let start = LatLng(latitude: 43.7300, longitude: 7.4200)
  static let middle = LatLng(latitude: 43.7310, longitude: 7.4210)
  static let pickup = LatLng(latitude: 43.7320, longitude: 7.4220)
  static let dropoff = LatLng(latitude: 43.7340, longitude: 7.4240)

  func trip(status: TripStatus, vehicle: LatLng) -> TripInfo {
    var trip = TripInfo(tripName: "providers/acme/trips/t1", status: status)
    trip.vehicleID = "cab"
    trip.vehicleLocation = VehicleMarkerLocation(coordinate: vehicle, heading: 45)
    trip.pickupLocation = TerminalLocation(point: Self.pickup)
    trip.dropoffLocation = TerminalLocation(point: Self.dropoff)
    var first = RemainingWaypoint(location: TerminalLocation(point: Self.pickup), tripID: "t1", type: .pickup)
    first.path = TrafficRoute(
      points: [vehicle, Self.middle, Self.pickup], traffic: [SpeedInterval(start: 1, end: 2, speed: .trafficJam)])
    let last = RemainingWaypoint(location: TerminalLocation(point: Self.dropoff), tripID: "t1", type: .dropOff)
    trip.remainingWaypoints = status == .enrouteToDropoff ? [last] : [first, last]
    trip.activeRoute = trip.remainingWaypoints.first?.path
    return trip
  }

  func session() throws -> JourneySharingSession {
    let services = ConsumerServices(
      providerID: "acme", endpoint: FleetEndpoint(host: "127.0.0.1", port: 1), tokenProvider: NoTokens())
    return JourneySharingSession(tripModel: try services.tripService.tripModel(forTripName: "providers/acme/trips/t1"))
  }

  struct NoTokens: AuthorizationTokenProvider {
    func token(for context: AuthorizationContext) async throws -> String { "" }
  }

  @Test func aFrameHasTheRouteMarkersAndCamera() throws {
    let session = try session()
    let trip = trip(status: .enrouteToPickup, vehicle: Self.start)
    session.tripModel(
      session.tripModel, didUpdate: trip, updatedPropertyFields: TripPropertyFields.changes(from: nil, to: trip))
    var frame = session.frame(at: Date())
    #expect(frame.tripStatus == "ENROUTE_TO_PICKUP")
    #expect(frame.markers.map(\.type) == [.tripPickupPoint, .tripDropoffPoint, .tripVehicle], "by z-index")
    #expect(frame.markers.last?.position == Self.start)
    let active = frame.polylines.filter { $0.type == .activeRoute }
    #expect(active.count == 1, "traffic off: one line")
    #expect(active.first?.color == session.style.polylineStyle(.activeRoute).strokeColor)
    #expect(active.first?.points.first == Self.start && active.first?.points.last == Self.pickup)
    let camera = try #require(frame.camera)
    #expect(camera.contains(Self.start) && camera.contains(Self.pickup))
    #expect(!camera.contains(Self.dropoff), "the camera fits the vehicle and its next stop")

    session.style.polylines[.activeRoute]?.isTrafficEnabled = true
    frame = session.frame(at: Date())
    let coloured = frame.polylines.filter { $0.type == .activeRoute }
    #expect(coloured.map(\.trafficSpeed) == [nil, .trafficJam])
    #expect(coloured.last?.color == TrafficColors.standard.trafficJam)
    #expect(coloured.first?.points.last == coloured.last?.points.first, "the pieces join")
  }

  @Test func aPassedPickupIsNotDrawn() throws {
    let session = try session()
    let trip = trip(status: .enrouteToDropoff, vehicle: Self.pickup)
    session.tripModel(
      session.tripModel, didUpdate: trip, updatedPropertyFields: TripPropertyFields.changes(from: nil, to: trip))
    let frame = session.frame(at: Date())
    #expect(!frame.markers.contains { $0.type == .tripPickupPoint })
    #expect(frame.markers.contains { $0.type == .tripDropoffPoint })
  }

  @Test func theFrameEncodesForTheWeb() throws {
    let session = try session()
    let trip = trip(status: .enrouteToPickup, vehicle: Self.start)
    session.tripModel(
      session.tripModel, didUpdate: trip, updatedPropertyFields: TripPropertyFields.changes(from: nil, to: trip))
    let json = String(decoding: try JSONEncoder().encode(session.frame(at: Date())), as: UTF8.self)
    #expect(json.contains("\"color\":\"#4285F4FF\""))
    let decoded = try JSONDecoder().decode(JourneySharingFrame.self, from: Data(json.utf8))
    #expect(decoded == session.frame(at: Date()))
  }
}
