import FleetCore
import Foundation
import Testing
@testable import FleetRouting

@Test func debugSnap() throws {
  let engine = try RoutingEngine(osm: SharedData.monaco)
  let vias = try String(contentsOfFile: "/tmp/vias.txt", encoding: .utf8).split(separator: "\n").map { l in
    let p = l.split(separator: ",").map { Double($0)! }
    return LatLng(latitude: p[1], longitude: p[0])
  }
  for leg in [3, 7, 8] {
    let pos = try engine.positions([vias[leg], vias[leg + 1]])
    let path = engine.search(from: pos[0], to: pos[1])!
    print("LEG", leg, path.duration)
    let n = engine.network
    for (x, y) in zip(path.directedEdges, path.directedEdges.dropFirst()) {
      let arc = engine.turns.arcs(from: x).first { engine.turns.arcTarget[$0] == y }!
      let e1 = n.edges[TurnGraph.edge(of: x)]
      let j = TurnGraph.isReversed(x) ? e1.from : e1.to
      let inB = TurnGraph.bearing(n, x, atEnd: true), outB = TurnGraph.bearing(n, y, atEnd: false)
      let deg = n.edges.filter { $0.from == j || $0.to == j }.count
      print(String(format: "  turn at %@ angle %.0f roads %d cost %.2f delay %.1f  way %lld -> %lld", "\(n.coordinate(ofJunction: j))", Geo.turnAngle(from: inB, to: outB), deg, engine.turns.arcTurnCost[arc], n.junctionDelays[Int(j)], e1.wayID, n.edges[TurnGraph.edge(of: y)].wayID))
    }
  }
}
