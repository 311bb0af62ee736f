import Foundation

/// Each key's quotas: a per-minute token bucket and a per-UTC-day count. Pure: the caller
/// passes the time. Counts live in memory, so a restart forgives the day so far.
public struct APIKeyQuotas: Sendable {
  struct Usage {
    var tokens: Double
    var refilled: Date
    var day: Int
    var usedToday: Int
  }

  var usage: [String: Usage] = [:]

  public init() {}

  /// Takes one request from `key`'s quotas at `now`, or throws RESOURCE_EXHAUSTED saying which
  /// quota and when it refills. With `share` instances serving, each allows its part.
  public mutating func acquire(_ key: APIKeyRecord, now: Date, share: Int = 1) throws(FleetError) {
    let share = max(share, 1)
    let perMinute = Double(max(key.perMinute, 1)) / Double(share)
    let perDay = max(key.perDay / share, 1)
    let day = Int((now.timeIntervalSince1970 / 86_400).rounded(.down))
    var state = usage[key.id] ?? Usage(tokens: perMinute, refilled: now, day: day, usedToday: 0)
    state.tokens = min(perMinute, state.tokens + max(0, now.timeIntervalSince(state.refilled)) * perMinute / 60)
    state.refilled = now
    if state.day != day {
      state.day = day
      state.usedToday = 0
    }
    defer { usage[key.id] = state }
    guard state.usedToday < perDay else {
      let midnight = Double(day + 1) * 86_400 - now.timeIntervalSince1970
      throw FleetError(
        .resourceExhausted,
        "API key '\(key.id)' has used its \(key.perDay) requests for today (UTC); the quota refills at midnight UTC",
        retryAfter: .seconds(Int64(midnight.rounded(.up))))
    }
    guard state.tokens >= 1 else {
      let wait = (1 - state.tokens) * 60 / perMinute
      throw FleetError(
        .resourceExhausted,
        "API key '\(key.id)' has used its \(key.perMinute) requests per minute; retry in \(String(format: "%.1f", wait)) s",
        retryAfter: .milliseconds(Int64((wait * 1000).rounded(.up))))
    }
    state.tokens -= 1
    state.usedToday += 1
  }
}
