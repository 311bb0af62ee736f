import FleetGeometry
import Foundation
import Synchronization

/// Rendered tiles kept in memory up to a byte budget, the oldest dropped first. The graph
/// never changes under a running server, so a tile once drawn stays right.
public final class TileCache: Sendable {
  struct Key: Hashable {
    var z: Int
    var x: Int
    var y: Int
  }

  struct State {
    var tiles: [Key: Data] = [:]
    var order: [Key] = []
    var bytes = 0
  }

  let renderer: TileRenderer
  let budget: Int
  let state = Mutex(State())

  public init(renderer: TileRenderer, budgetBytes: Int = 64 << 20) {
    self.renderer = renderer
    budget = budgetBytes
  }

  public var bounds: Viewport { renderer.bounds }

  /// Tile z/x/y as SVG bytes, or nil when there is no such tile.
  public func tile(z: Int, x: Int, y: Int) -> Data? {
    let key = Key(z: z, x: x, y: y)
    if let cached = state.withLock({ $0.tiles[key] }) { return cached }
    guard let svg = renderer.svg(z: z, x: x, y: y) else { return nil }
    let data = Data(svg.utf8)
    state.withLock { s in
      guard s.tiles[key] == nil else { return }
      s.tiles[key] = data
      s.order.append(key)
      s.bytes += data.count
      var dropped = 0
      while s.bytes > budget, dropped < s.order.count {
        let old = s.order[dropped]
        s.bytes -= s.tiles.removeValue(forKey: old)?.count ?? 0
        dropped += 1
      }
      if dropped > 0 { s.order.removeFirst(dropped) }
    }
    return data
  }
}
