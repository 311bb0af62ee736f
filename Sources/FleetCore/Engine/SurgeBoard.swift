import FleetGeometry
import Foundation
import Synchronization

/// A surge zone's state now: its multiplier, and the demand and supply behind it.
public struct SurgeReading: Sendable, Hashable {
  public var provider: String
  public var zone: String
  public var multiplier: Decimal6
  public var waitingRides: Int
  /// Quotes asked with their pickup in the zone in the last surge window.
  public var recentQuotes: Int
  /// Online vehicles without a trip in the zone or near it.
  public var freeVehicles: Int
  /// The window quotes are counted over.
  public var windowMinutes: Int

  /// Why the multiplier is what it is, for the quote.
  public var reason: String {
    let demand =
      "\(waitingRides) ride\(waitingRides == 1 ? "" : "s") waiting and \(recentQuotes) quote\(recentQuotes == 1 ? "" : "s") asked in the last \(windowMinutes) min"
    let supply = "\(freeVehicles) free vehicle\(freeVehicles == 1 ? "" : "s") in or near \(zone)"
    return multiplier > .one
      ? "demand outruns supply: \(demand) against \(supply)" : "supply covers demand: \(demand), \(supply)"
  }
}

/// Each surge zone's smoothed multiplier and the quotes recently asked there. Demand and supply
/// are read from the fleet when a reading is taken; a reading is reused for a second, so that a
/// burst of quotes does not rescan the zone's vehicles each time.
final class SurgeBoard: Sendable {
  struct Key: Hashable, Sendable {
    var provider: String
    var zone: String
  }

  struct Zone: Sendable {
    /// Quotes asked, counted per `bucketSeconds`: (bucket start, count), oldest first.
    var quoteBuckets: [(start: Double, count: Int)] = []
    var multiplier = 1.0
    var updated: Date?
    var reading: SurgeReading?
  }

  static let bucketSeconds = 10.0
  static let readingLifetime = 1.0

  let zones = Mutex<[Key: Zone]>([:])

  func recordQuote(_ key: Key, at now: Date) {
    zones.withLock { zones in
      let start = (now.timeIntervalSince1970 / Self.bucketSeconds).rounded(.down) * Self.bucketSeconds
      var zone = zones[key, default: Zone()]
      if let last = zone.quoteBuckets.last, last.start == start {
        zone.quoteBuckets[zone.quoteBuckets.count - 1].count += 1
      } else {
        zone.quoteBuckets.append((start, 1))
      }
      zones[key] = zone
    }
  }

  /// The zone's fresh reading, if one was taken in the last second.
  func cached(_ key: Key, now: Date) -> SurgeReading? {
    zones.withLock { zones in
      guard let zone = zones[key], let updated = zone.updated, now.timeIntervalSince(updated) < Self.readingLifetime
      else { return nil }
      return zone.reading
    }
  }

  /// Quotes asked in the zone within `window` before `now` (dropping older buckets).
  func recentQuotes(_ key: Key, window: Duration, now: Date) -> Int {
    zones.withLock { zones in
      guard var zone = zones[key] else { return 0 }
      let cutoff = now.timeIntervalSince1970 - window.seconds
      zone.quoteBuckets.removeAll { $0.start + Self.bucketSeconds <= cutoff }
      zones[key] = zone
      return zone.quoteBuckets.reduce(0) { $0 + $1.count }
    }
  }

  /// Moves the zone's multiplier toward `target` and keeps the reading it makes.
  func advance(_ key: Key, toward target: Double, maximum: Decimal6, now: Date, reading: SurgeReading)
    -> SurgeReading
  {
    zones.withLock { zones in
      var zone = zones[key, default: Zone()]
      let elapsed = zone.updated.map { now.timeIntervalSince($0) } ?? .infinity
      zone.multiplier =
        elapsed.isInfinite ? target : SurgePricing.smoothed(previous: zone.multiplier, target: target, elapsed: elapsed)
      zone.updated = now
      var reading = reading
      reading.multiplier = SurgePricing.published(zone.multiplier, maximum: maximum)
      zone.reading = reading
      zones[key] = zone
      return reading
    }
  }
}

extension Fleet {
  /// Every surge zone's reading now (metrics and the fleet page).
  public func surgeReadings() -> [SurgeReading] {
    let now = now()
    return configuration.tariffs.providers.keys.sorted().flatMap { provider in
      configuration.serviceAreas.surgeZones(provider: provider).map { region, area in
        surgeReading(provider: provider, zone: region.name, area: area, now: now)
      }
    }
  }

  /// The surge that applies to a pickup now: the first surge zone containing it.
  func surge(at pickup: LatLng, provider: String, recordingQuote: Bool, now: Date) -> SurgeQuote {
    guard let tariff = configuration.tariffs.providers[provider], tariff.surge.maximum > .one else {
      return .none("the provider's tariff has no surge")
    }
    guard
      let (region, area) = configuration.serviceAreas.surgeZones(provider: provider).first(where: {
        $0.1.contains(pickup)
      })
    else { return .none("no surge zone covers the pickup") }
    if recordingQuote { surgeBoard.recordQuote(SurgeBoard.Key(provider: provider, zone: region.name), at: now) }
    let reading = surgeReading(provider: provider, zone: region.name, area: area, now: now)
    return SurgeQuote(multiplier: reading.multiplier, zone: region.name, reason: reading.reason)
  }

  func surgeReading(provider: String, zone: String, area: Area, now: Date) -> SurgeReading {
    let key = SurgeBoard.Key(provider: provider, zone: zone)
    if let cached = surgeBoard.cached(key, now: now) { return cached }
    let tariff = configuration.tariffs.providers[provider]
    let maximum = tariff?.surge.maximum ?? .one
    let window = tariff?.surge.window ?? .seconds(600)
    let quotes = surgeBoard.recentQuotes(key, window: window, now: now)
    let freshness = now.addingTimeInterval(-configuration.dispatchRules.maximumStaleness.seconds)
    let (waiting, free) = state.withLock { s -> (Int, Int) in
      var waiting = 0
      for name in s.ridesInDispatch where name.provider == provider {
        guard let ride = s.rides[provider]?[name.id], ride.dispatchState == .waiting,
          let pickup = ride.request.pickupPoint?.point, area.contains(pickup)
        else { continue }
        waiting += 1
      }
      var free = 0
      let centre = LatLng(
        latitude: (area.bounds.low.latitude + area.bounds.high.latitude) / 2,
        longitude: (area.bounds.low.longitude + area.bounds.high.longitude) / 2)
      let radius = centre.distance(to: area.bounds.high) + SurgePricing.nearMetres
      s.grids[provider]?.forEach(near: centre, radius: radius) { v in
        guard v.isOnline, !v.hasTrips, v.serverTime >= freshness,
          area.distance(to: v.position) <= SurgePricing.nearMetres
        else { return }
        free += 1
      }
      return (waiting, free)
    }
    let target = SurgePricing.target(waiting: waiting, quotes: quotes, free: free, maximum: maximum)
    let reading = SurgeReading(
      provider: provider, zone: zone, multiplier: .one, waitingRides: waiting, recentQuotes: quotes,
      freeVehicles: free, windowMinutes: Int((window.seconds / 60).rounded()))
    return surgeBoard.advance(key, toward: target, maximum: maximum, now: now, reading: reading)
  }
}
