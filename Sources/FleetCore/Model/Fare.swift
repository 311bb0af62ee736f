import Foundation

/// A price with its breakdown; the items always sum to the total.
public struct Fare: Sendable, Hashable, Codable {
  /// What an item of the breakdown charges for (the wire's `FareItem.Kind` names).
  public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
    case base = "BASE"
    case distance = "DISTANCE"
    case time = "TIME"
    case bookingFee = "BOOKING_FEE"
    case zoneFee = "ZONE_FEE"
    case surge = "SURGE"
    case minimumAdjustment = "MINIMUM_ADJUSTMENT"
    case cancellationFee = "CANCELLATION_FEE"
  }

  public struct Item: Sendable, Hashable, Codable {
    public var kind: Kind
    public var amount: Money

    public init(_ kind: Kind, _ amount: Money) {
      self.kind = kind
      self.amount = amount
    }
  }

  public var items: [Item]
  public var currency: Currency
  /// The surge multiplier the fare was priced with (1: none).
  public var surge: Decimal6

  public init(items: [Item], currency: Currency, surge: Decimal6 = .one) {
    self.items = items
    self.currency = currency
    self.surge = surge
  }

  public var total: Money { items.reduce(.zero(currency)) { $0 + $1.amount } }

  public func amount(_ kind: Kind) -> Money {
    items.filter { $0.kind == kind }.reduce(.zero(currency)) { $0 + $1.amount }
  }
}
