import Foundation

/// One report of FleetKit's streaming location channel (fleetkit.v1.VehicleUpdates) or its REST
/// batch: an UpdateVehicle limited to what a device reports.
public struct LocationReport: Sendable {
  public var name: ResourceName
  public var vehicle: VehicleInput
  /// UpdateVehicle's update_mask, within `Fleet.reportable`; empty means the positions.
  public var mask: [String]

  public init(name: ResourceName, vehicle: VehicleInput, mask: [String] = []) {
    self.name = name
    self.vehicle = vehicle
    self.mask = mask
  }
}

extension Fleet {
  /// What a report may change: the fields a device reports.
  public static let reportable: Set<String> = [
    "last_location", "past_locations", "vehicle_state", "current_route_segment", "current_route_segment_end_point",
    "remaining_distance_meters", "remaining_time_seconds", "eta_to_first_waypoint", "navigation_status",
  ]

  /// Checks and locates reports in order, and applies them in memory as one write, before
  /// returning; `PendingReports.stored()` waits until that write is durable. Reports submitted
  /// one after another are therefore applied in that order, while their commits overlap.
  /// Each report fails alone, with the error UpdateVehicle would give.
  public func submitReports(_ reports: [LocationReport], caller: Caller) -> PendingReports {
    var outcomes: [Result<Vehicle, FleetError>?] = Array(repeating: nil, count: reports.count)
    var updates: [(index: Int, update: VehicleUpdate)] = []
    updates.reserveCapacity(reports.count)
    for (i, report) in reports.enumerated() {
      do throws(FleetError) {
        let mask = report.mask.isEmpty ? Self.positionMask(of: report.vehicle) : report.mask
        var update = try prepareUpdate(
          caller: caller, name: report.name, input: report.vehicle, mask: mask, updatable: Self.reportable,
          operation: .reportLocations)
        update.keepsNewerPosition = true
        updates.append((i, update))
      } catch {
        outcomes[i] = .failure(error)
      }
    }
    let apply = Self.applying(updates)
    do throws(FleetError) {
      let staged = try stage(apply)
      return PendingReports(fleet: self, outcomes: outcomes, staged: staged, retry: apply)
    } catch {
      for (i, _) in updates { outcomes[i] = .failure(error) }
      return PendingReports(fleet: self, outcomes: outcomes, staged: nil, retry: apply)
    }
  }

  /// The mask of a report that gives none: its positions.
  static func positionMask(of input: VehicleInput) -> [String] {
    input.pastLocations.isEmpty ? ["last_location"] : ["last_location", "past_locations"]
  }

  /// One write applying every update; an update that fails (its vehicle is gone) fails alone.
  static func applying(_ updates: [(index: Int, update: VehicleUpdate)])
    -> @Sendable (inout State, Date) throws(FleetError) -> ([(Int, Result<Vehicle, FleetError>)], [StoredChange])
  {
    { s, now in
      var results: [(Int, Result<Vehicle, FleetError>)] = []
      var changes: [StoredChange] = []
      results.reserveCapacity(updates.count)
      changes.reserveCapacity(updates.count)
      for (i, update) in updates {
        do throws(FleetError) {
          let (vehicle, change) = try apply(update, to: &s, now: now)
          results.append((i, .success(vehicle)))
          changes += change
        } catch {
          results.append((i, .failure(error)))
        }
      }
      return (results, changes)
    }
  }
}

/// Reports applied in memory, their commit still to wait for.
public struct PendingReports: Sendable {
  let fleet: Fleet
  /// The reports that failed their checks; nil for those in the staged write.
  let outcomes: [Result<Vehicle, FleetError>?]
  let staged: Fleet.StagedWrite<[(Int, Result<Vehicle, FleetError>)]>?
  let retry:
    @Sendable (inout Fleet.State, Date) throws(FleetError) -> ([(Int, Result<Vehicle, FleetError>)], [StoredChange])

  /// Each report's outcome, in order, once the write is durable: the vehicle as stored, or the
  /// report's error. A write overtaken by another instance is applied again, as UpdateVehicle's.
  public func stored() async -> [Result<Vehicle, FleetError>] {
    var outcomes = outcomes
    var applied = staged?.result ?? []
    if let staged {
      do throws(FleetError) {
        applied = try await fleet.write(starting: staged, retry)
      } catch {
        applied = applied.map { ($0.0, .failure(error)) }
      }
    }
    for (i, result) in applied { outcomes[i] = result }
    return outcomes.map { $0 ?? .failure(FleetError(.internal, "report not applied")) }
  }

  /// `stored()` with each vehicle as UpdateVehicle returns it (its progress decorated).
  public func shown() async -> [Result<Vehicle, FleetError>] {
    await stored().map { $0.map(fleet.shown) }
  }
}
