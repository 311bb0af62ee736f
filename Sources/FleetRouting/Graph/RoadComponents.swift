/// The road network's strongly connected components, sized the way OSRM sizes them, so that
/// both engines call the same pieces of road "tiny" (a fenced car park, a private estate, a
/// piece cut off by the extract's border) and snap away from them alike.
///
/// OSRM counts a component's nodes in its edge-based graph: one per drivable direction of a
/// compressed road (a road between real intersections, through nodes that only join two
/// pieces of the same road), with a road's two directions joined. FleetKit's edges are finer
/// (they also end where ways end), so each compressed road is counted once, by its first edge.
struct RoadComponents: Sendable {
  /// Component of each directed edge.
  let component: [Int32]
  /// Each component's size in OSRM's units.
  let size: [Int32]
  /// Components smaller than this are tiny: OSRM's `--small-component-size`. A small extract may
  /// have no component this big; OSRM then calls every one tiny.
  let smallComponentSize: Int32
  /// Components from this size on are the network's main part: the small-component size, or the
  /// largest component's size when none reaches it. Where OSRM's snapping finds no route,
  /// FleetKit moves the waypoints into the main part instead of answering NoRoute.
  let mainFrom: Int32

  init(network: RoadNetwork, graph: TurnGraph, smallComponentSize: Int32) {
    let twoWay = network.edges.map { $0.forward != nil && $0.backward != nil }
    let (component, _) = graph.stronglyConnectedComponents(joiningDirections: twoWay)
    let road = JunctionGeometry.compressedRoads(network)
    var size = [Int32](repeating: 0, count: Int(component.max() ?? -1) + 1)
    var counted = Set<Int32>()
    for (edge, roadEdge) in network.edges.enumerated() where counted.insert(road[edge]).inserted {
      for reversed in [false, true] where roadEdge.cost(reversed: reversed) != nil {
        size[Int(component[Int(TurnGraph.directed(edge, reversed: reversed))])] += 1
      }
    }
    self.component = component
    self.size = size
    self.smallComponentSize = smallComponentSize
    mainFrom = min(smallComponentSize, size.max() ?? 0)
  }

  func isTiny(_ directed: Int) -> Bool { size[Int(component[directed])] < smallComponentSize }
  func isMain(_ directed: Int) -> Bool { size[Int(component[directed])] >= mainFrom }
}
