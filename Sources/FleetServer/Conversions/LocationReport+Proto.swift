import FleetCore
import FleetProto

extension LocationReport {
  /// A wire report, with UpdateVehicle's request checks.
  init(_ r: Fleetkit_V1_LocationReport) throws(FleetError) {
    let name = try ResourceName(parsing: r.name, kind: .vehicles)
    guard r.hasVehicle else { throw .invalid("vehicle is required") }
    self.init(
      name: name, vehicle: try VehicleInput(r.vehicle, provider: name.provider, id: name.id), mask: r.updateMask.paths)
  }
}

extension Fleetkit_V1_LocationReport {
  /// A delivery vehicle's report: it names one, or carries one.
  var isDeliveryVehicle: Bool {
    guard !hasDeliveryVehicle else { return true }
    // A scan of the name's bytes: Foundation's `contains` and the standard library's generic
    // `firstRange(of:)` each cost more than parsing the name, on every report.
    var name = name
    return name.withUTF8 { bytes in
      let needle = Self.deliveryVehiclesSegment
      guard bytes.count >= needle.count else { return false }
      return (0...(bytes.count - needle.count)).contains { start in
        bytes[start] == needle[0] && needle.indices.allSatisfy { bytes[start + $0] == needle[$0] }
      }
    }
  }

  private static let deliveryVehiclesSegment = Array("/deliveryVehicles/".utf8)
}

extension Fleetkit_V1_ReportError {
  init(_ error: FleetError, sequence: UInt64) {
    self.init()
    self.sequence = sequence
    code = Int32(error.code.rpcCode.rawValue)
    message = error.message
  }
}
