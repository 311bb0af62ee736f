import FleetCore
import FleetProto
import Foundation

/// FleetKit's location reports (fleetkit.v1.VehicleUpdates and its REST batch), whichever
/// transport brought them, through the request gate as every call: the caller, one quota token
/// per report, the read barrier, UpdateVehicle's checks, then one write for the message. Every
/// report gets its own answer, metric and (when refused) log line; none fails another.
struct ReportIntake: Sendable {
  let gate: RequestGate
  let fleet: Fleet

  /// Takes one message's reports in order. Returns once they are applied in memory, so that
  /// the reports of a message submitted next apply after them; `answer` waits for durability.
  /// With `provider` (a REST batch's path), every report must name a vehicle of it.
  func submit(
    _ reports: [Fleetkit_V1_LocationReport], authorization: String?, requestID: String, provider: String? = nil
  ) async -> SubmittedReports {
    var submitted = SubmittedReports(sequences: reports.map(\.sequence), requestID: requestID)
    let admission: RequestGate.Admission
    do throws(FleetError) {
      admission = try await gate.admit(.reportLocations, items: reports.count, authorization: authorization)
    } catch {
      submitted.admissionFailure = error
      submitted.failures = Array(repeating: error, count: reports.count)
      return submitted
    }
    submitted.caller = admission.caller
    if let refusal = admission.refusal {
      for i in admission.granted..<reports.count { submitted.failures[i] = refusal }
    }
    var accepted: [LocationReport] = []
    accepted.reserveCapacity(admission.granted)
    for i in 0..<admission.granted {
      if reports[i].isDeliveryVehicle {
        // A delivery vehicle's report: its own write, in the message's order.
        switch await deliveryReport(reports[i], caller: admission.caller, provider: provider) {
        case .success(let vehicle): submitted.deliveryVehicles[i] = vehicle
        case .failure(let error): submitted.failures[i] = error
        }
        continue
      }
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
    if !accepted.isEmpty { submitted.pending = fleet.submitReports(accepted, caller: admission.caller) }
    return submitted
  }

  /// A delivery vehicle's report, stored durably (a stream that carries them reads on once each
  /// is: a driver's app sends one every few seconds).
  func deliveryReport(_ report: Fleetkit_V1_LocationReport, caller: Caller, provider: String?) async
    -> Result<DeliveryVehicle, FleetError>
  {
    do throws(FleetError) {
      let name = try ResourceName(parsing: report.name, kind: .deliveryVehicles)
      if let provider, name.provider != provider {
        throw FleetError.invalid(
          "name must be a delivery vehicle of providers/\(provider), the request's path, got '\(report.name)'")
      }
      guard report.hasDeliveryVehicle else { throw .invalid("delivery_vehicle is required") }
      let input = try DeliveryVehicleInput(report.deliveryVehicle, provider: name.provider, id: name.id)
      return .success(
        try await fleet.reportDeliveryLocation(caller: caller, name: name, input: input, mask: report.updateMask.paths))
    } catch {
      return .failure(error)
    }
  }

  /// The acknowledgements and errors of a message, once its write is durable, recorded by the
  /// gate: a metric per report and a log line per refused one (a stream logs its own end; a
  /// REST batch, `call`, logs as a call). With `vehicles`, each acknowledgement carries its
  /// vehicle with the fields that mask names.
  func answer(_ submitted: SubmittedReports, vehicles: VehicleReadMask?, transport: String, call: String? = nil) async
    -> Fleetkit_V1_ReportLocationsResponse
  {
    var outcomes: [Result<Vehicle?, FleetError>] = submitted.failures.map {
      .failure($0 ?? FleetError(.internal, "the report was not answered"))
    }
    for i in submitted.deliveryVehicles.keys { outcomes[i] = .success(nil) }
    if let pending = submitted.pending {
      let stored = vehicles != nil ? await pending.shown() : await pending.stored()
      for (i, outcome) in zip(submitted.indices, stored) { outcomes[i] = outcome.map { $0 } }
    }
    var response = Fleetkit_V1_ReportLocationsResponse()
    for (i, (sequence, outcome)) in zip(submitted.sequences, outcomes).enumerated() {
      switch outcome {
      case .success(let vehicle):
        var acknowledgement = Fleetkit_V1_Acknowledgement()
        acknowledgement.sequence = sequence
        if let vehicles, let vehicle { acknowledgement.vehicle = vehicles.apply(to: vehicle) }
        if vehicles != nil, let delivery = submitted.deliveryVehicles[i] {
          acknowledgement.deliveryVehicle = DeliveryProtoVehicle(delivery)
        }
        response.acknowledged.append(acknowledgement)
      case .failure(let error):
        response.errors.append(Fleetkit_V1_ReportError(error, sequence: sequence))
      }
    }
    gate.record(
      .reportLocations, transport: transport, requestID: submitted.requestID, caller: submitted.caller,
      outcomes: outcomes.map(\.failure), item: { [sequences = submitted.sequences] in "report \(sequences[$0])" },
      elapsed: ContinuousClock.now - submitted.received, call: call)
    return response
  }
}

/// One message's reports, applied in memory; `ReportIntake.answer` waits until they are durable.
struct SubmittedReports: Sendable {
  let sequences: [UInt64]
  let requestID: String
  let received = ContinuousClock.now
  var caller: Caller?
  /// Why the message was refused as a whole (its token, or the read barrier).
  var admissionFailure: FleetError?
  /// Each report refused before the write, by position.
  var failures: [FleetError?]
  /// The positions of the reports in the write, in its order.
  var indices: [Int] = []
  var pending: PendingReports?
  /// Delivery vehicles' reports, stored, by position.
  var deliveryVehicles: [Int: DeliveryVehicle] = [:]

  init(sequences: [UInt64], requestID: String) {
    self.sequences = sequences
    self.requestID = requestID
    self.failures = Array(repeating: nil, count: sequences.count)
  }
}
