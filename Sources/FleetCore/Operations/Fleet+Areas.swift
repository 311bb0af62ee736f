import FleetGeometry
import Foundation

/// One service area or zone as ListAreas shows it: with a zone's fee in the provider's currency
/// and its surge now.
public struct AreaView: Sendable {
  public var region: ServiceAreas.Region
  public var area: Area
  public var fee: Money?
  public var surge: SurgeReading?
}

extension Fleet {
  // MARK: - ListAreas

  /// The provider's service areas and zones, in the file's order.
  public func listAreas(caller: Caller, provider: String) throws(FleetError) -> [AreaView] {
    try caller.mayCall(.listAreas)
    try caller.checkProvider(provider)
    let currency = configuration.tariffs.providers[provider]?.currency
    let now = now()
    return configuration.serviceAreas.regions(provider: provider).map { region, area in
      AreaView(
        region: region, area: area, fee: currency.flatMap { region.fee?.money($0) },
        surge: region.kind == .zone && region.surge
          ? surgeReading(provider: provider, zone: region.name, area: area, now: now) : nil)
    }
  }
}
