import Foundation

/// How a zone's surge multiplier follows demand and supply (docs/ride-service.md, "Surge"):
///
/// - demand D = rides waiting with their pickup in the zone + half the quotes asked there in the
///   last `window` (not every rider who asks books);
/// - supply S = online vehicles without a trip, with a fresh position in the zone or within
///   `nearMetres` of it;
/// - target = 1 while S covers D, else 1 + (D/max(S,1) − 1)/2, capped at the tariff's maximum;
/// - the multiplier moves toward the target exponentially (two-thirds of the way in
///   `responseSeconds`), so one burst of quotes does not whip prices, and is published rounded
///   down to a step of 0.05, never below 1.
public enum SurgePricing {
  public static let quoteWeight = 0.5
  public static let nearMetres = 1000.0
  public static let responseSeconds = 60.0
  public static let stepMicros: Int64 = 50_000

  /// What demand and supply call for, before smoothing.
  public static func target(waiting: Int, quotes: Int, free: Int, maximum: Decimal6) -> Double {
    let demand = Double(waiting) + quoteWeight * Double(quotes)
    let supply = Double(free)
    guard demand > supply else { return 1 }
    let ratio = demand / max(supply, 1)
    return min(maximum.doubleValue, max(1, 1 + (ratio - 1) / 2))
  }

  /// The multiplier `elapsed` seconds after it was `previous`, moving toward `target`.
  public static func smoothed(previous: Double, target: Double, elapsed: Double) -> Double {
    guard elapsed > 0 else { return previous }
    return previous + (target - previous) * (1 - exp(-elapsed / responseSeconds))
  }

  /// The multiplier quotes use: rounded down to the step, within [1, maximum].
  public static func published(_ multiplier: Double, maximum: Decimal6) -> Decimal6 {
    let micros = Int64((multiplier * 1_000_000).rounded(.down))
    let stepped = micros / stepMicros * stepMicros
    return Decimal6(micros: min(maximum.micros, max(1_000_000, stepped)))
  }
}
