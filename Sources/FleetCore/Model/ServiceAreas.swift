import FleetGeometry
import Foundation

/// Where each provider serves, and its named zones (`fleetd serve --service-areas FILE.geojson`).
public struct ServiceAreas: Sendable {
  /// One feature of the file.
  public struct Region: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
      case serviceArea = "service_area"
      case zone
    }

    public var provider: String
    public var kind: Kind
    public var name: String
    /// A zone's fee for each ride that starts or ends in it, in the provider's currency.
    public var fee: Decimal6?
    /// Whether surge is computed for the zone.
    public var surge: Bool

    public init(provider: String, kind: Kind, name: String, fee: Decimal6? = nil, surge: Bool = false) {
      self.provider = provider
      self.kind = kind
      self.name = name
      self.fee = fee
      self.surge = surge
    }
  }

  public let regions: [Region]
  let index: AreaIndex<Int>
  let providersWithServiceAreas: Set<String>
  let providersWithZones: Set<String>

  public init(_ regions: [(Region, Area)]) {
    self.regions = regions.map(\.0)
    index = AreaIndex(regions.enumerated().map { ($0.offset, $0.element.1) })
    providersWithServiceAreas = Set(regions.filter { $0.0.kind == .serviceArea }.map(\.0.provider))
    providersWithZones = Set(regions.filter { $0.0.kind == .zone }.map(\.0.provider))
  }

  public static let none = ServiceAreas([])

  /// Whether the provider serves `point`: inside one of its service areas, or anywhere when it
  /// has none.
  public func serves(_ point: LatLng, provider: String) -> Bool {
    guard providersWithServiceAreas.contains(provider) else { return true }
    return index.areas(containing: point).contains {
      regions[$0.key].provider == provider && regions[$0.key].kind == .serviceArea
    }
  }

  /// The provider's zones containing `point`, in the file's order.
  public func zones(at point: LatLng, provider: String) -> [Region] {
    index.areas(containing: point).map { regions[$0.key] }.filter { $0.provider == provider && $0.kind == .zone }
  }

  /// Whether the provider has any zone (vehicles crossing its borders make events).
  public func hasZones(provider: String) -> Bool { providersWithZones.contains(provider) }

  /// The provider's zones that compute surge, with their areas.
  public func surgeZones(provider: String) -> [(Region, Area)] {
    index.entries.compactMap { entry in
      let region = regions[entry.key]
      return region.provider == provider && region.kind == .zone && region.surge ? (region, entry.area) : nil
    }
  }

  /// The provider's service areas and zones with their areas, in the file's order.
  public func regions(provider: String) -> [(Region, Area)] {
    index.entries.filter { regions[$0.key].provider == provider }.sorted { $0.key < $1.key }.map {
      (regions[$0.key], $0.area)
    }
  }

  /// Every provider named in the file.
  public var providers: Set<String> { Set(regions.map(\.provider)) }
}

extension FleetConfiguration {
  /// Sets the tariffs and service areas after checking that they agree: a zone's fee must be
  /// money of its provider's currency, and only a provider with a tariff may have fees or surge.
  public mutating func setRideService(tariffs: Tariffs, serviceAreas: ServiceAreas, source: String) throws(FleetError) {
    for region in serviceAreas.regions where region.fee != nil || region.surge {
      guard let tariff = tariffs.providers[region.provider] else {
        throw .invalid(
          "\(source): zone '\(region.name)' of provider '\(region.provider)' has a fee or surge, but the provider has no tariff"
        )
      }
      if let fee = region.fee, fee.money(tariff.currency) == nil {
        throw .invalid(
          "\(source): zone '\(region.name)' has fee \"\(fee)\", finer than \(tariff.currency.code)'s minor unit (\(tariff.currency.digits) digits)"
        )
      }
    }
    self.tariffs = tariffs
    self.serviceAreas = serviceAreas
  }
}
