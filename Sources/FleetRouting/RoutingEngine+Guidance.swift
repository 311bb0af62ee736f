import FleetGeometry

extension RoutingEngine {
  /// Turn-by-turn steps for a leg of a route this engine found: from its start (`origin` is the
  /// point asked for, which tells the side of the road) to its end, one step per maneuver.
  public func steps(of leg: RouteLeg, from origin: LatLng, to destination: LatLng) -> [RouteStep] {
    Guidance(network: network, junctions: junctionGeometry, turns: turns).steps(of: leg, from: origin, to: destination)
  }
}
