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
  var isDeliveryVehicle: Bool { hasDeliveryVehicle || name.contains("/deliveryVehicles/") }
}

extension Fleetkit_V1_ReportError {
  init(_ error: FleetError, sequence: UInt64) {
    self.init()
    self.sequence = sequence
    code = Int32(error.code.rpcCode.rawValue)
    message = error.message
  }
}
