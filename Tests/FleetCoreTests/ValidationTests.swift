import FleetCore
import FleetGeometry
import Testing

@Suite("Resource names and IDs")
struct ResourceNameTests {
  @Test(arguments: ["a", "car-1", "trip_ü", String(repeating: "x", count: 64)])
  func acceptsValidIDs(id: String) throws {
    try ResourceID.validate(id, field: "trip_id")
  }

  @Test(arguments: ["", "a/b", "a:b", "a?b", "a,b", "a#b", String(repeating: "x", count: 65), "e\u{301}"])
  func rejectsInvalidIDs(id: String) {
    let error = #expect(throws: FleetError.self) { try ResourceID.validate(id, field: "trip_id") }
    #expect(error?.code == .invalidArgument)
    #expect(error?.message.contains("trip_id") == true)
  }

  @Test func parsesNames() throws {
    let name = try ResourceName(parsing: "providers/p/trips/t", kind: .trips)
    #expect(name.provider == "p" && name.id == "t")
    #expect(throws: FleetError.self) { try ResourceName(parsing: "providers/p/vehicles/t", kind: .trips) }
    #expect(throws: FleetError.self) { try ResourceName(parsing: "providers//trips/t", kind: .trips) }
    #expect(throws: FleetError.self) { try ProviderName(parsing: "project/p") }
    let accented = try ResourceName(parsing: "providers/é-p/deliveryVehicles/ü-1", kind: .deliveryVehicles)
    #expect(accented.provider == "é-p" && accented.id == "ü-1" && accented.kind == .deliveryVehicles)
  }

  /// Names of the wrong shape: each part of `providers/{provider}/{kind}/{id}` missing, empty,
  /// misnamed or with a slash too many; the error names the field and the shape.
  @Test(arguments: [
    "", "providers", "providers/p", "providers/p/trips", "providers/p/trips/", "providers//trips/t",
    "/p/trips/t", "provider/p/trips/t", "xproviders/p/trips/t", "providers/p/trip/t", "providers/p/tripsx/t",
    "providers/p/trips/t/", "providers/p/trips/t/u", "providers/p//trips/t", "//trips/t",
  ])
  func rejectsMalformedNames(name: String) {
    let error = #expect(throws: FleetError.self) { try ResourceName(parsing: name, kind: .trips, field: "trip.name") }
    #expect(error?.code == .invalidArgument)
    #expect(error?.message == "trip.name must be 'providers/{provider}/trips/{id}', got '\(name)'")
  }

  @Test func checksCoordinates() {
    #expect(throws: FleetError.self) { try LatLng(latitude: 91, longitude: 0).validate("p") }
    #expect(throws: FleetError.self) { try LatLng(latitude: 0, longitude: -180.5).validate("p") }
    #expect(throws: FleetError.self) { try LatLng(latitude: .nan, longitude: 0).validate("p") }
  }

  @Test func checksAttributes() {
    let many = (0..<101).map { Attribute(key: "k\($0)", value: .bool(true)) }
    #expect(throws: FleetError.self) { try Attribute.validate(many, field: "a") }
    #expect(throws: FleetError.self) {
      try Attribute.validate(
        [Attribute(key: "a", value: .number(1)), Attribute(key: "a", value: .number(2))], field: "a")
    }
    #expect(throws: FleetError.self) { try Attribute.validate([Attribute(key: "a:b", value: .bool(true))], field: "a") }
    #expect(throws: FleetError.self) {
      try Attribute.validate([Attribute(key: "k", value: .string(String(repeating: "v", count: 255)))], field: "a")
    }
  }

  @Test func viewportCrossingTheAntimeridian() {
    let box = Viewport(low: LatLng(latitude: -10, longitude: 170), high: LatLng(latitude: 10, longitude: -170))
    #expect(box.contains(LatLng(latitude: 0, longitude: 179)))
    #expect(box.contains(LatLng(latitude: 0, longitude: -175)))
    #expect(!box.contains(LatLng(latitude: 0, longitude: 0)))
  }
}

@Suite("Quotas")
struct QuotaTests {
  @Test func exhaustsAndRefills() throws {
    var limiter = QuotaLimiter(configuration: QuotaConfiguration(perMinute: [.create: 60]))
    for _ in 0..<60 { try limiter.acquire(provider: "p", bucket: .create, now: 0) }
    let error = #expect(throws: FleetError.self) { try limiter.acquire(provider: "p", bucket: .create, now: 0) }
    #expect(error?.code == .resourceExhausted)
    #expect(error?.retryAfter == .seconds(1))
    // Another provider has its own bucket; a second later one token is back.
    try limiter.acquire(provider: "q", bucket: .create, now: 0)
    try limiter.acquire(provider: "p", bucket: .create, now: 1)
  }

  @Test func parsesSettings() throws {
    var configuration = QuotaConfiguration()
    try configuration.apply("update=100")
    #expect(configuration.perMinute[.update] == 100)
    #expect(throws: FleetError.self) { try configuration.apply("writes=1") }
    #expect(throws: FleetError.self) { try configuration.apply("update=0") }
  }
}
