import FleetProto
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2

/// The Driver SDK's entry point, as Fleet Engine's `GMTDRidesharingDriverAPI`: made from a
/// `DriverContext`, it owns the vehicle reporter. `run()` connects to fleetd and keeps the
/// reporter working until the task running it is cancelled.
public final class RidesharingDriverAPI: Sendable {
  public let driverContext: DriverContext
  public let vehicleReporter: VehicleReporter

  public init(driverContext: DriverContext, clock: any ReporterClock = SystemReporterClock()) {
    self.driverContext = driverContext
    vehicleReporter = VehicleReporter(context: driverContext, clock: clock)
  }

  /// Connects to fleetd and reports until cancelled: over fleetd's location stream when it has
  /// one, else with UpdateVehicle calls.
  public func run() async throws {
    let timeout = driverContext.reporting.callTimeout
    try await driverContext.endpoint.withClient { client in
      let channel = UpdateChannel(client: client, timeout: timeout)
      await withDiscardingTaskGroup { group in
        group.addTask { await channel.run() }
        await vehicleReporter.run { update, token in
          ReportedVehicle(try await channel.send(Maps_Fleetengine_V1_UpdateVehicleRequest(update), token: token))
        }
        group.cancelAll()
      }
    }
  }
}
