import FleetProto
import Testing

@testable import FleetServer

/// Which reports of the location stream are delivery vehicles': those that carry one, or whose
/// name has a `deliveryVehicles` segment wherever it stands (a malformed name is then refused
/// with the delivery vehicle's shape).
@Suite struct LocationReportKindTests {
  @Test(arguments: [
    ("providers/p/deliveryVehicles/van", true), ("deliveryVehicles/van/deliveryVehicles/", true),
    ("x/deliveryVehicles/", true), ("/deliveryVehicles/", true), ("providers/p/vehicles/van", false),
    ("providers/p/vehicles/deliveryVehicles", false), ("providers/p/deliveryVehicles", false),
    ("/deliveryvehicles/", false), ("deliveryVehicles/", false), ("", false), ("/deliveryVehicle/s", false),
    ("providers/é/deliveryVehicles/ü", true),
  ])
  func aReportNamingADeliveryVehicleIsOne(name: String, delivery: Bool) {
    let report = Fleetkit_V1_LocationReport.with { $0.name = name }
    #expect(report.isDeliveryVehicle == delivery)
  }

  @Test func aReportCarryingADeliveryVehicleIsOneWhateverItsName() {
    let report = Fleetkit_V1_LocationReport.with {
      $0.name = "providers/p/vehicles/car"
      $0.deliveryVehicle.name = "providers/p/deliveryVehicles/van"
    }
    #expect(report.isDeliveryVehicle)
  }
}
