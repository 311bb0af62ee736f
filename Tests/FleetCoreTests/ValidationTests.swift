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

  /// Each rule on a reported location, and the field and rule its error names.
  @Test func checksEveryPartOfALocation() throws {
    let here = LatLng(latitude: 43.74, longitude: 7.42)
    let cases: [(String, (inout VehicleLocation) -> Void)] = [
      ("v.last_location.location is required", { $0.location = nil }),
      (
        "v.last_location.location.latitude must be within [-90, 90], got 95.0",
        {
          $0.location = LatLng(latitude: 95, longitude: 0)
        }
      ),
      (
        "v.last_location.raw_location.longitude must be within [-180, 180], got 200.0",
        {
          $0.rawLocation = LatLng(latitude: 0, longitude: 200)
        }
      ),
      ("v.last_location.flp_location.latitude", { $0.flpLocation = LatLng(latitude: .nan, longitude: 0) }),
      (
        "v.last_location.supplemental_location.latitude",
        {
          $0.supplementalLocation = LatLng(latitude: -91, longitude: 0)
        }
      ),
      ("v.last_location.heading must be within [0, 360), got 360", { $0.heading = 360 }),
      ("v.last_location.flp_heading_degrees must be within [0, 360), got -1", { $0.flpHeadingDegrees = -1 }),
      ("v.last_location.latlng_accuracy must be a non-negative number, got -1.0", { $0.latlngAccuracy = -1 }),
      ("v.last_location.heading_accuracy must be a non-negative number", { $0.headingAccuracy = .infinity }),
      ("v.last_location.altitude_accuracy must be a non-negative number", { $0.altitudeAccuracy = -2 }),
      ("v.last_location.speed_accuracy must be a non-negative number", { $0.speedAccuracy = .nan }),
      ("v.last_location.raw_location_accuracy must be a non-negative number", { $0.rawLocationAccuracy = -0.5 }),
      ("v.last_location.speed must be a finite number, got nan", { $0.speed = .nan }),
      ("v.last_location.altitude must be a finite number", { $0.altitude = -.infinity }),
      ("v.last_location.flp_latlng_accuracy_meters must be a finite number", { $0.flpLatlngAccuracyMeters = .nan }),
      (
        "v.last_location.supplemental_location_accuracy must be a finite number",
        {
          $0.supplementalLocationAccuracy = .infinity
        }
      ),
      (
        "v.last_location.location_sensor must not be FLEET_ENGINE_LOCATION (output only)",
        {
          $0.locationSensor = .fleetEngineLocation
        }
      ),
      (
        "v.last_location.raw_location_sensor must not be FLEET_ENGINE_LOCATION",
        {
          $0.rawLocationSensor = .fleetEngineLocation
        }
      ),
      (
        "v.last_location.supplemental_location_sensor must not be FLEET_ENGINE_LOCATION",
        {
          $0.supplementalLocationSensor = .fleetEngineLocation
        }
      ),
    ]
    var good = VehicleLocation(location: here)
    good.heading = 359
    good.speed = -1  // a speed may be negative (reversing); only finite
    good.latlngAccuracy = 0
    try good.validate("v.last_location")
    for (message, spoil) in cases {
      var location = good
      spoil(&location)
      let error = #expect(throws: FleetError.self) { try location.validate("v.last_location") }
      #expect(error?.code == .invalidArgument)
      #expect(error?.message.hasPrefix(message) == true, "\(error?.message ?? "no error") for \(message)")
    }
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
