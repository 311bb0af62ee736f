import FleetProto
import Foundation

/// The demo's terminal: a line when the rides' counts change (at most every few seconds), and
/// the sharing page of a live ride whenever the one shown last has ended.
struct DemoProgress: Sendable {
  let backend: DemoBackend
  let web: String
  let print: @Sendable (String) -> Void

  struct Counts: Equatable {
    var requested = 0
    var waiting = 0
    var assigned = 0
    var completed = 0
    var scheduled = 0
    var unserved = 0
    var canceled = 0
    var online = 0
  }

  func run() async throws {
    var last = Counts()
    var shared: String?
    var pause = Duration.seconds(3)
    while true {
      try await Task.sleep(for: pause)
      let rides: [Fleetkit_V1_Ride]
      let online: Int
      let started = ContinuousClock.now
      do {
        rides = try await backend.rides()
        online = try await backend.onlineVehicles()
        // A big city's lists take a while: reading them takes at most a twentieth of the time.
        pause = max(.seconds(3), (ContinuousClock.now - started) * 20)
      } catch is CancellationError {
        return
      } catch {
        continue
      }
      var counts = Counts(requested: rides.count, online: online)
      for ride in rides {
        switch ride.state {
        case .waiting: counts.waiting += 1
        case .assigned: counts.assigned += 1
        case .completed: counts.completed += 1
        case .scheduled: counts.scheduled += 1
        case .noVehicleFound: counts.unserved += 1
        case .canceled: counts.canceled += 1
        default: break
        }
      }
      if counts != last {
        last = counts
        let time = Date().formatted(.iso8601.time(includingFractionalSeconds: false))
        print(
          "\(time)  rides: \(counts.requested) requested, \(counts.scheduled) booked ahead, \(counts.waiting) waiting, "
            + "\(counts.assigned) assigned, \(counts.completed) completed, \(counts.unserved) unserved  ·  "
            + "vehicles online: \(counts.online)")
      }
      let live = rides.filter { $0.state == .assigned }
      if shared.map({ id in !live.contains { $0.name == id } }) ?? true,
        let newest = live.max(by: { $0.assignTime.seconds < $1.assignTime.seconds })
      {
        shared = newest.name
        let id = String(newest.name.split(separator: "/").last ?? "")
        let token = try backend.keys.consumer.token(tripID: id, lifetime: 3600)
        print("  Sharing page (ride \(id), vehicle \(newest.vehicleID)): \(web)/share/trips/\(id)#token=\(token)")
      }
    }
  }
}
