import Foundation

/// How a product prices a trip, in integers throughout (docs/ride-service.md):
///
/// - BASE, and DISTANCE (`perKm` × kilometres) and TIME (`perMinute` × minutes), each rounded
///   to the currency's minor unit, half away from zero;
/// - SURGE: the three above times (multiplier − 1), rounded the same way;
/// - MINIMUM_ADJUSTMENT: what lifts those four to the product's `minimum`;
/// - BOOKING_FEE and a ZONE_FEE for each zone with a fee where the ride starts or ends, on top.
///
/// The breakdown always sums to the fare.
public enum FarePricing {
  /// The fare of a trip of `meters` and `seconds`.
  public static func fare(
    _ product: Product, meters: Double, seconds: Double, surge: Decimal6 = .one, zoneFees: [Money] = []
  ) -> Fare {
    let currency = product.base.currency
    let metres = Int64(max(0, meters).rounded())
    let wholeSeconds = Int64(max(0, seconds).rounded())
    let base = product.base
    let distance = Money(mulDivRounded(product.perKm.micros, metres * currency.scale, 1_000_000_000), currency)
    let time = Money(mulDivRounded(product.perMinute.micros, wholeSeconds * currency.scale, 60_000_000), currency)
    var items = [Fare.Item(.base, base), Fare.Item(.distance, distance), Fare.Item(.time, time)]
    var subtotal = base + distance + time
    if surge > .one {
      let extra = Money(mulDivRounded(subtotal.minorUnits, surge.micros - 1_000_000, 1_000_000), currency)
      items.append(Fare.Item(.surge, extra))
      subtotal = subtotal + extra
    }
    if subtotal < product.minimum {
      items.append(Fare.Item(.minimumAdjustment, product.minimum - subtotal))
    }
    if product.bookingFee.minorUnits > 0 { items.append(Fare.Item(.bookingFee, product.bookingFee)) }
    for fee in zoneFees where fee.minorUnits > 0 { items.append(Fare.Item(.zoneFee, fee)) }
    return Fare(items: items, currency: currency, surge: max(surge, .one))
  }

  /// What a rider pays for cancelling after a vehicle was assigned.
  public static func cancellation(_ product: Product) -> Fare {
    Fare(items: [Fare.Item(.cancellationFee, product.cancellationFee)], currency: product.base.currency)
  }
}

/// `a × b ÷ d`, rounded half away from zero, exact for any Int64 operands whose quotient fits.
func mulDivRounded(_ a: Int64, _ b: Int64, _ d: Int64) -> Int64 {
  precondition(d > 0)
  let product = a.multipliedFullWidth(by: b)
  let (quotient, remainder) = d.dividingFullWidth(product)
  guard remainder != 0, remainder.magnitude * 2 >= d.magnitude else { return quotient }
  return quotient + ((a < 0) != (b < 0) ? -1 : 1)
}
