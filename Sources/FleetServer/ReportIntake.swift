import FleetCore
import FleetProto
import Foundation

/// FleetKit's location reports (fleetkit.v1.VehicleUpdates and its REST batch), whichever
/// transport brought them: the caller, each report's quota, UpdateVehicle's checks, then one
/// write for the message. Every report gets its own answer; none fails another.
struct ReportIntake: Sendable {
  let gate: RequestGate
  let fleet: Fleet

  static let rpc = "ReportLocations"

  /// Takes one message's reports in order. Returns once they are applied in memory, so that
  /// the reports of a message submitted next apply after them; `answer` waits for durability.
  /// With `provider` (a REST batch's path), every report must name a vehicle of it.
  func submit(_ reports: [Fleetkit_V1_LocationReport], authorization: String?, provider: String? = nil) async
    -> SubmittedReports
  {
    var submitted = SubmittedReports(sequences: reports.map(\.sequence))
    guard !reports.isEmpty else { return submitted }
    let caller: Caller
    do throws(FleetError) {
      caller = try await gate.verifier.verify(authorizationHeader: authorization)
    } catch {
      submitted.failAll(error)
      return submitted
    }
    let share = gate.quotaShare()
    let now = (ContinuousClock.now - gate.epoch).seconds
    let (granted, refusal) = gate.quotas.withLock { q in
      q.acquire(upTo: reports.count, provider: caller.provider, bucket: .update, now: now, share: share)
    }
    if let refusal { for i in granted..<reports.count { submitted.failures[i] = refusal } }
    do throws(FleetError) {
      try await gate.synchronize()
    } catch {
      submitted.failAll(error)
      return submitted
    }
    var accepted: [LocationReport] = []
    accepted.reserveCapacity(granted)
    for i in 0..<granted {
      do throws(FleetError) {
        let report = try LocationReport(reports[i])
        if let provider, report.name.provider != provider {
          throw FleetError.invalid(
            "name must be a vehicle of providers/\(provider), the request's path, got '\(reports[i].name)'")
        }
        accepted.append(report)
        submitted.indices.append(i)
      } catch {
        submitted.failures[i] = error
      }
    }
    if !accepted.isEmpty { submitted.pending = fleet.submitReports(accepted, caller: caller) }
    return submitted
  }
}

/// One message's reports, applied in memory; `answer` waits until they are durable.
struct SubmittedReports: Sendable {
  let sequences: [UInt64]
  let received = ContinuousClock.now
  /// Each report refused before the write, by position.
  var failures: [FleetError?]
  /// The positions of the reports in the write, in its order.
  var indices: [Int] = []
  var pending: PendingReports?

  init(sequences: [UInt64]) {
    self.sequences = sequences
    self.failures = Array(repeating: nil, count: sequences.count)
  }

  var count: Int { sequences.count }

  mutating func failAll(_ error: FleetError) {
    failures = Array(repeating: error, count: sequences.count)
  }

  /// The acknowledgements and errors, once the write is durable; metrics counted per report.
  func answer(returnVehicles: Bool, metrics: RequestMetrics, transport: String) async
    -> Fleetkit_V1_ReportLocationsResponse
  {
    var outcomes: [Result<Vehicle, FleetError>?] = failures.map { $0.map { .failure($0) } }
    if let pending {
      let stored = returnVehicles ? await pending.shown() : await pending.stored()
      for (i, outcome) in zip(indices, stored) { outcomes[i] = outcome }
    }
    var response = Fleetkit_V1_ReportLocationsResponse()
    var codes: [String: Int] = [:]
    for (sequence, outcome) in zip(sequences, outcomes) {
      switch outcome {
      case .success(let vehicle)?:
        var acknowledgement = Fleetkit_V1_Acknowledgement()
        acknowledgement.sequence = sequence
        if returnVehicles { acknowledgement.vehicle = Maps_Fleetengine_V1_Vehicle(vehicle) }
        response.acknowledged.append(acknowledgement)
        codes["OK", default: 0] += 1
      case .failure(let error)?:
        response.errors.append(Self.error(error, sequence: sequence))
        codes[error.code.metricsLabel, default: 0] += 1
      case nil:
        let error = FleetError(.internal, "report \(sequence) was not answered")
        response.errors.append(Self.error(error, sequence: sequence))
        codes[error.code.metricsLabel, default: 0] += 1
      }
    }
    let elapsed = ContinuousClock.now - received
    for (code, count) in codes {
      metrics.record(rpc: ReportIntake.rpc, transport: transport, code: code, duration: elapsed, count: count)
    }
    return response
  }

  static func error(_ error: FleetError, sequence: UInt64) -> Fleetkit_V1_ReportError {
    var reported = Fleetkit_V1_ReportError()
    reported.sequence = sequence
    reported.code = Int32(error.code.rpcCode.rawValue)
    reported.message = error.message
    return reported
  }
}

extension LocationReport {
  /// A wire report, with UpdateVehicle's request checks.
  init(_ r: Fleetkit_V1_LocationReport) throws(FleetError) {
    let name = try ResourceName(parsing: r.name, kind: .vehicles)
    guard r.hasVehicle else { throw .invalid("vehicle is required") }
    self.init(
      name: name, vehicle: try VehicleInput(r.vehicle, provider: name.provider, id: name.id), mask: r.updateMask.paths)
  }
}
