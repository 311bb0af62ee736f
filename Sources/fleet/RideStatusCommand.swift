import ArgumentParser
import FleetAuth
import FleetConsumer
import FleetRideStatus
import FleetRideStatusClient
import FleetSimulator
import Foundation
import Synchronization

struct RideStatusCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "ride-status",
    abstract: "Print a trip's ride status (SiriKit's ride-status vocabulary) as JSON.",
    discussion: """
      Reads fleetd's `:rideStatus` endpoint with a token for the trip signed by the key (a
      consumer key, as a rider's app gets from its backend, or a server key). With --follow, runs
      the ride-status updater: one JSON object per line for each new status (pushed by fleetd's
      event stream, or polled), the last valid one again while fleetd does not answer; it exits 0
      after the completed status, 1 after too many failures in a row.
      """)

  @OptionGroup var server: ServerAddress
  @Option(help: "Provider ID.") var provider: String
  @Option(help: "Service-account key file (from `fleetd keys add`).") var key: String
  @Option(help: "Trip ID.") var trip: String
  @Option(help: "The ride identifier the statuses carry (default: the trip ID).") var rideIdentifier: String?
  @Flag(help: "Follow the ride until it ends, one JSON object per line.") var follow = false
  @Option(help: "Seconds between polls with --follow.") var interval = 5.0
  @Option(help: "Seconds a poll may take.") var deadline = 4.0
  @Option(help: "Failures in a row after which --follow gives up.") var maxFailures = 6

  func validate() throws {
    for (name, value) in [("--interval", interval), ("--deadline", deadline)] {
      guard value > 0, value <= 86_400 else {
        throw ValidationError("\(name) must be a number of seconds above 0 and at most 86400")
      }
    }
    guard maxFailures > 0 else { throw ValidationError("--max-failures must be at least 1") }
    guard rideIdentifier?.isEmpty != true else { throw ValidationError("--ride-identifier must not be empty") }
  }

  func run() async throws {
    let tokens = try ServiceAccountTokenProvider(key: try ServiceAccountKey.load(path: key))
    try server.checkPort(for: .http)
    var configuration = FleetdRideStatusSource.Configuration(baseURL: server.httpURL, providerID: provider)
    configuration.tripID = { [trip] _ in trip }
    configuration.requestTimeout = .milliseconds(Int(deadline * 1000))
    let source = FleetdRideStatusSource(configuration: configuration, tokenProvider: tokens)
    let ride = rideIdentifier ?? trip
    guard follow else {
      do {
        StatusPrinter.print(try await source.status(rideIdentifier: ride))
      } catch {
        throw ToolFailure("\(error)")
      }
      return
    }
    var updates = RideStatusUpdater.Configuration()
    updates.interval = .milliseconds(Int(interval * 1000))
    updates.deadline = .milliseconds(Int(deadline * 1000))
    updates.maximumConsecutiveFailures = maxFailures
    let updater = RideStatusUpdater(source: source, configuration: updates)
    let printer = StatusPrinter()
    try updater.startSendingUpdates(rideIdentifier: ride, observer: printer)
    let reason = await withTaskGroup(of: RideStatusUpdatesStopReason?.self) { group in
      group.addTask {
        await updater.run()
        return nil
      }
      group.addTask { await printer.stopped.first { _ in true } }
      let reason = await group.next() ?? nil
      group.cancelAll()
      return reason
    }
    if case .sourceFailing(let failures, let error) = reason {
      throw ToolFailure("gave up after \(failures) failures in a row; the last: \(error)")
    }
  }
}

/// Prints each status as one JSON line; says when the updater stopped by itself.
final class StatusPrinter: RideStatusReceiver {
  let stopped: AsyncStream<RideStatusUpdatesStopReason>
  let stop: AsyncStream<RideStatusUpdatesStopReason>.Continuation

  init() { (stopped, stop) = AsyncStream.makeStream() }

  static func print(_ status: RideStatus) {
    guard let json = try? RideStatusJSON.encode(status) else { return }
    FileHandle.standardOutput.write(json + Data("\n".utf8))
  }

  func send(_ status: RideStatus) { Self.print(status) }

  func rideStatusUpdatesStopped(_ reason: RideStatusUpdatesStopReason) {
    stop.yield(reason)
    stop.finish()
  }
}

/// A failure printed as one line on standard error, exit status 1.
struct ToolFailure: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
