import FleetGeometry

extension LatLng {
  /// Checks the ranges Fleet Engine enforces; `field` names the field in the error (built only
  /// then: every report's points are checked).
  public func validate(_ field: @autoclosure () -> String) throws(FleetError) {
    guard latitude.isFinite, (-90...90).contains(latitude) else {
      throw .invalid("\(field()).latitude must be within [-90, 90], got \(latitude)")
    }
    guard longitude.isFinite, (-180...180).contains(longitude) else {
      throw .invalid("\(field()).longitude must be within [-180, 180], got \(longitude)")
    }
  }
}

extension Viewport {
  public func validate(_ field: String) throws(FleetError) {
    try low.validate("\(field).low")
    try high.validate("\(field).high")
    guard low.latitude <= high.latitude else {
      throw .invalid("\(field).low.latitude must not exceed \(field).high.latitude")
    }
  }
}
