import FleetCore
import FleetGeometry
import Foundation

/// One rider's request: when (real seconds from the start), where from and to, how many.
public struct RideRequest: Sendable, Equatable {
  public var time: Double
  public var pickup: LatLng
  public var dropoff: LatLng
  public var passengers: Int

  public init(time: Double, pickup: LatLng, dropoff: LatLng, passengers: Int) {
    self.time = time
    self.pickup = pickup
    self.dropoff = dropoff
    self.passengers = passengers
  }
}

/// How demand rises and falls over the day: a multiplier per hour (0…23), interpolated
/// linearly between hours; the busiest hour is 1.
public struct DemandProfile: Sendable, Equatable {
  public let hourly: [Double]

  public init(hourly: [Double]) throws(FleetError) {
    guard hourly.count == 24 else {
      throw FleetError(.invalidArgument, "a demand profile has 24 hourly values, got \(hourly.count)")
    }
    guard hourly.allSatisfy({ $0.isFinite && $0 >= 0 }), let peak = hourly.max(), peak > 0 else {
      throw FleetError(.invalidArgument, "a demand profile's values are non-negative numbers, at least one above 0")
    }
    self.hourly = hourly.map { $0 / peak }
  }

  /// The same demand all day.
  public static let flat = try! DemandProfile(hourly: Array(repeating: 1, count: 24))

  /// A working day in a city: quiet at night, a morning peak at 8, a busy midday, the evening
  /// peak at 17–18 and a late-evening tail (the shape of published taxi and ride-hail hourly
  /// counts).
  public static let commute = try! DemandProfile(hourly: [
    0.25, 0.15, 0.10, 0.08, 0.10, 0.22, 0.50, 0.85, 1.00, 0.80, 0.62, 0.62,
    0.68, 0.66, 0.66, 0.72, 0.88, 0.98, 0.95, 0.78, 0.62, 0.55, 0.48, 0.36,
  ])

  /// `flat`, `commute`, or 24 comma-separated numbers.
  public static func named(_ text: String) throws(FleetError) -> DemandProfile {
    switch text {
    case "flat": return .flat
    case "commute": return .commute
    default:
      let values = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
      guard values.allSatisfy({ $0 != nil }) else {
        throw FleetError(
          .invalidArgument, "a demand profile is flat, commute or 24 comma-separated numbers, got '\(text)'")
      }
      return try DemandProfile(hourly: values.map { $0! })
    }
  }

  /// `HH:MM` (00:00–23:59) as seconds after midnight; nil when it is not such a time.
  public static func secondOfDay(_ clock: String) -> Double? {
    let parts = clock.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
    guard parts.count == 2, let hour = parts[0], let minute = parts[1], (0..<24).contains(hour),
      (0..<60).contains(minute)
    else { return nil }
    return Double(hour * 3600 + minute * 60)
  }

  /// The multiplier at `secondOfDay` (wrapping at midnight).
  public func level(atSecondOfDay secondOfDay: Double) -> Double {
    let day = 86_400.0
    let t = (secondOfDay.truncatingRemainder(dividingBy: day) + day).truncatingRemainder(dividingBy: day) / 3600
    let hour = Int(t)
    let next = (hour + 1) % 24
    let share = t - Double(hour)
    return hourly[hour] * (1 - share) + hourly[next] * share
  }
}

/// Requests arriving as a Poisson process whose rate follows a profile over the day: `perMinute`
/// (of real time) at the profile's peak, less at quieter hours (thinning: arrivals drawn at the
/// peak rate, each kept with the hour's share). The day's clock starts at `startOfDay` and runs
/// `speedup` times faster than real time. Places come from `places`. Seeded, so that a run repeats.
public struct PoissonDemand: Sendable {
  public let perMinute: Double
  public let profile: DemandProfile
  /// The simulated time of day at the start, seconds after midnight.
  public let startOfDay: Double
  public let speedup: Double
  let places: CityPlaces
  var random: SplitMix64
  var clock = 0.0

  public init(
    perMinute: Double, profile: DemandProfile, startOfDay: Double, speedup: Double = 1, places: CityPlaces,
    seed: UInt64
  ) {
    self.perMinute = perMinute
    self.profile = profile
    self.startOfDay = startOfDay
    self.speedup = speedup
    self.places = places
    random = SplitMix64(seed: seed)
  }

  /// The next request, in time order; nil when there is no demand at all.
  public mutating func next() -> RideRequest? {
    guard perMinute > 0 else { return nil }
    while true {
      clock += -log(max(Double.ulpOfOne, random.nextUnit())) * 60 / perMinute
      guard random.nextUnit() < profile.level(atSecondOfDay: startOfDay + clock * speedup) else { continue }
      let trip = places.trip(using: &random)
      return RideRequest(
        time: clock, pickup: trip.pickup, dropoff: trip.dropoff, passengers: places.party(using: &random))
    }
  }
}

/// Requests replayed from a CSV file: `time,pickup_lat,pickup_lng,dropoff_lat,dropoff_lng,passengers`,
/// with an optional header line of those names. `time` is seconds from the start, or an ISO 8601
/// date-time (then seconds from the first row's). Rows are in time order. Played `speedup` times
/// faster than recorded.
public struct ReplayDemand: Sendable {
  public let requests: [RideRequest]
  public var speedup = 1.0
  var position = 0

  public init(requests: [RideRequest]) { self.requests = requests }

  public init(csv text: String, source: String) throws(FleetError) {
    var requests: [RideRequest] = []
    var origin: Date?
    let columns = ["time", "pickup_lat", "pickup_lng", "dropoff_lat", "dropoff_lng", "passengers"]
    for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
      let line = raw.trimmingCharacters(in: .whitespaces)
      if line.isEmpty || line.hasPrefix("#") { continue }
      let fields = line.split(separator: ",", omittingEmptySubsequences: false).map {
        $0.trimmingCharacters(in: .whitespaces)
      }
      let place = "\(source) line \(index + 1)"
      if requests.isEmpty, origin == nil, fields.first?.lowercased() == "time" {
        guard fields.map({ $0.lowercased() }) == columns else {
          throw FleetError(.invalidArgument, "\(place): the header must be \(columns.joined(separator: ","))")
        }
        continue
      }
      guard fields.count == columns.count else {
        throw FleetError(
          .invalidArgument, "\(place): \(columns.count) fields (\(columns.joined(separator: ","))), got \(fields.count)"
        )
      }
      let time: Double
      if let seconds = Double(fields[0]), seconds.isFinite, seconds >= 0 {
        time = seconds
      } else if let date = try? Date(fields[0], strategy: .iso8601) {
        origin = origin ?? date
        time = date.timeIntervalSince(origin!)
      } else {
        throw FleetError(
          .invalidArgument,
          "\(place): time must be seconds from the start (≥ 0) or an ISO 8601 date-time, got '\(fields[0])'")
      }
      if let last = requests.last, time < last.time {
        throw FleetError(
          .invalidArgument, "\(place): time \(fields[0]) is before the row above; rows are in time order")
      }
      func coordinate(_ i: Int, _ j: Int) throws(FleetError) -> LatLng {
        guard let lat = Double(fields[i]), (-90...90).contains(lat) else {
          throw FleetError(.invalidArgument, "\(place): \(columns[i]) must be a latitude in -90…90, got '\(fields[i])'")
        }
        guard let lng = Double(fields[j]), (-180...180).contains(lng) else {
          throw FleetError(
            .invalidArgument, "\(place): \(columns[j]) must be a longitude in -180…180, got '\(fields[j])'")
        }
        return LatLng(latitude: lat, longitude: lng)
      }
      let pickup = try coordinate(1, 2)
      let dropoff = try coordinate(3, 4)
      guard let passengers = Int(fields[5]), (1...20).contains(passengers) else {
        throw FleetError(.invalidArgument, "\(place): passengers must be a whole number in 1…20, got '\(fields[5])'")
      }
      requests.append(RideRequest(time: time, pickup: pickup, dropoff: dropoff, passengers: passengers))
    }
    guard !requests.isEmpty else { throw FleetError(.invalidArgument, "\(source) has no requests") }
    self.requests = requests
  }

  public mutating func next() -> RideRequest? {
    guard position < requests.count else { return nil }
    defer { position += 1 }
    var request = requests[position]
    request.time /= speedup
    return request
  }
}

/// Where requests come from: a model or a replay.
public enum Demand: Sendable {
  case poisson(PoissonDemand)
  case replay(ReplayDemand)

  public mutating func next() -> RideRequest? {
    switch self {
    case .poisson(var model):
      defer { self = .poisson(model) }
      return model.next()
    case .replay(var replay):
      defer { self = .replay(replay) }
      return replay.next()
    }
  }
}
