import FleetProto
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2

/// The Driver SDK's delivery mode, as Fleet Engine's `DeliveryDriverApi`: made from a
/// `DriverContext` whose `vehicleID` is a delivery vehicle's, it owns the vehicle reporter
/// (positions and route progress, with the rides reporter's backlog and retries) and the
/// vehicle manager (stops and task outcomes). `run()` connects to fleetd and keeps both working
/// until the task running it is cancelled.
public final class DeliveryDriverAPI: Sendable {
  public let driverContext: DriverContext
  public let vehicleReporter: VehicleReporter
  public let vehicleManager: DeliveryVehicleManager

  public init(driverContext: DriverContext, clock: any ReporterClock = SystemReporterClock()) {
    self.driverContext = driverContext
    vehicleReporter = VehicleReporter(context: driverContext, kind: .deliveries, clock: clock)
    vehicleManager = DeliveryVehicleManager(context: driverContext)
  }

  /// Connects to fleetd and reports until cancelled: positions over fleetd's location stream
  /// when it has one, else with UpdateDeliveryVehicle calls, as the rides reporter does.
  public func run() async throws {
    let timeout = driverContext.reporting.callTimeout
    try await driverContext.endpoint.withClient { client in
      await vehicleManager.connect(Maps_Fleetengine_Delivery_V1_DeliveryService.Client(wrapping: client))
      let channel = UpdateChannel(client: client, timeout: timeout)
      await withDiscardingTaskGroup { group in
        group.addTask { await channel.run() }
        await vehicleReporter.run { update, token in
          ReportedVehicle(
            try await channel.send(Maps_Fleetengine_Delivery_V1_UpdateDeliveryVehicleRequest(update), token: token))
        }
        group.cancelAll()
      }
      await vehicleManager.connect(nil)
    }
  }
}
