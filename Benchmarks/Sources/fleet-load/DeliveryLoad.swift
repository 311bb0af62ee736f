import FleetProto
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2

/// The Deliveries API under load (issue 36): delivery vehicles `dload-N`, each with one open
/// DELIVERY task `dload-task-N` (tracking ID `dload-parcel-N`) on its one stop, and closed-loop
/// workers calling one RPC each over grpc-swift's client:
/// - `delivery-update`: UpdateDeliveryVehicle(last_location), the van's app reporting (durable);
/// - `task-update`: UpdateTask(attributes), the provider's backend noting a change (durable);
/// - `tracking`: GetTaskTrackingInfo, a recipient's tracking page polling (read-only).
struct DeliveryLoad: Sendable {
  typealias Client = Maps_Fleetengine_Delivery_V1_DeliveryService.Client<HTTP2ClientTransport.Posix>

  static let rpcs: Set<String> = ["delivery-update", "task-update", "tracking"]

  let provider: String
  let metadata: Metadata
  let vehicles: Int
  let clients: [GRPCClient<HTTP2ClientTransport.Posix>]

  func client(_ index: Int) -> Client { Client(wrapping: clients[index % clients.count]) }

  /// Where vehicle `index` starts and its stop is: spread over Monaco's middle.
  func point(_ index: Int, step: Double = 0) -> Google_Type_LatLng {
    .with {
      $0.latitude = 43.731 + Double(index % 50) / 5_000 + step.truncatingRemainder(dividingBy: 100) / 100_000
      $0.longitude = 7.415 + Double(index / 50 % 50) / 5_000
    }
  }

  /// The vans, their tasks and stops; those that exist are reused, the stops written again.
  func setUp() async throws {
    for i in 0..<vehicles {
      let deliveries = client(i)
      do {
        _ = try await deliveries.createDeliveryVehicle(
          .with {
            $0.parent = "providers/\(provider)"
            $0.deliveryVehicleID = "dload-\(i)"
            $0.deliveryVehicle.lastLocation.location = point(i)
          }, metadata: metadata)
      } catch let error as RPCError where error.code == .alreadyExists {}
      do {
        _ = try await deliveries.createTask(
          .with {
            $0.parent = "providers/\(provider)"
            $0.taskID = "dload-task-\(i)"
            $0.task.type = .delivery
            $0.task.state = .open
            $0.task.trackingID = "dload-parcel-\(i)"
            $0.task.plannedLocation.point = point(i + 7)
            $0.task.taskDuration = .init(seconds: 120)
          }, metadata: metadata)
      } catch let error as RPCError where error.code == .alreadyExists {}
      _ = try await deliveries.updateDeliveryVehicle(
        .with {
          $0.deliveryVehicle.name = "providers/\(provider)/deliveryVehicles/dload-\(i)"
          $0.deliveryVehicle.remainingVehicleJourneySegments = [
            .with {
              $0.stop.state = .enroute
              $0.stop.plannedLocation.point = point(i + 7)
              $0.stop.tasks = [.with { $0.taskID = "dload-task-\(i)" }]
            }
          ]
          $0.updateMask.paths = ["remaining_vehicle_journey_segments"]
        }, metadata: metadata)
    }
  }

  /// `workers` closed loops of `rpc` from `measureFrom` (after a warm-up) until `end`.
  func run(rpc: String, workers: Int, measureFrom: ContinuousClock.Instant, end: ContinuousClock.Instant)
    async throws -> VehicleResult
  {
    try await withThrowingTaskGroup(of: VehicleResult.self) { group in
      for w in 0..<workers {
        let deliveries = client(w)
        let i = w % vehicles
        group.addTask {
          await VehicleResult.closedLoop(measureFrom: measureFrom, end: end) { step in
            switch rpc {
            case "delivery-update":
              _ = try await deliveries.updateDeliveryVehicle(
                .with {
                  $0.deliveryVehicle.name = "providers/\(provider)/deliveryVehicles/dload-\(i)"
                  $0.deliveryVehicle.lastLocation.location = point(i, step: step)
                  $0.deliveryVehicle.lastLocation.updateTime = .init(date: Date())
                  $0.updateMask.paths = ["last_location"]
                }, metadata: metadata)
            case "task-update":
              _ = try await deliveries.updateTask(
                .with {
                  $0.task.name = "providers/\(provider)/tasks/dload-task-\(i)"
                  $0.task.attributes = [
                    .with {
                      $0.key = "note"
                      $0.stringValue = "update \(Int(step))"
                    }
                  ]
                  $0.updateMask.paths = ["attributes"]
                }, metadata: metadata)
            default:
              _ = try await deliveries.getTaskTrackingInfo(
                .with { $0.name = "providers/\(provider)/taskTrackingInfo/dload-parcel-\(i)" }, metadata: metadata)
            }
          }
        }
      }
      return try await VehicleResult.combined(group)
    }
  }
}
