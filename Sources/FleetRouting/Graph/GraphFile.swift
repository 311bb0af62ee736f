import Foundation

/// The prepared road network on disk: `fleetd graph build` writes it, `fleetd serve --graph`
/// and `fleetd route` read it.
///
/// Layout (little-endian): the magic `FLEETKIT-GRAPH\0\0`, a format version (UInt32), the
/// profile as JSON (length-prefixed, so a graph always routes with the profile it was built
/// with), then each array of the network as a count and fixed-width records, then the routing
/// hierarchy's node order (`CCH.order`: the slow, metric-independent part of preparing it).
/// Loading is a handful of bulk copies; nothing is parsed per element except names.
public enum GraphFile {
  static let magic = Array("FLEETKIT-GRAPH".utf8) + [0, 0]
  public static let version: UInt32 = 8

  public struct FormatError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let offset: Int
    public let reason: String
    public var description: String { "\(path) is not a usable graph file (byte \(offset)): \(reason)" }
  }

  public static func write(_ network: RoadNetwork, profile: CarProfile, to path: String) throws {
    var out = GraphWriter()
    out.bytes.append(contentsOf: magic)
    out.put(version)
    let profileJSON = try JSONEncoder().encode(profile)
    out.put(UInt64(profileJSON.count))
    out.bytes.append(contentsOf: profileJSON)

    out.put(UInt64(network.points.count))
    for p in network.points {
      out.put(p.latitudeE6)
      out.put(p.longitudeE6)
    }
    out.putArray(network.pointNodes)
    out.putArray(network.junctions)
    out.putArray(network.blockedJunctions.map { $0 ? UInt8(1) : 0 })
    out.put(UInt64(network.obstacles.count))
    for o in network.obstacles {
      out.put(o.junction)
      out.put(o.kind.rawValue)
      out.put(o.seconds)
      out.put(o.arrivingBy)
    }
    out.put(UInt64(network.edges.count))
    for e in network.edges {
      out.put(e.from)
      out.put(e.to)
      out.put(e.geometryStart)
      out.put(e.geometryEnd)
      out.put(e.length)
      for cost in [e.forward, e.backward] {
        out.put(UInt8(cost == nil ? 0 : cost!.restricted ? 2 : 1))
        out.put(cost?.duration ?? 0)
        out.put(cost?.weight ?? 0)
        out.put(cost?.classes.rawValue ?? 0)
      }
      for name in e.labelIndices { out.put(name) }
      out.put(e.wayID)
      out.put(e.flags.rawValue)
      out.put(e.roadClass.rawValue)
      out.put(e.lanes)
      out.put(e.turnLanesForward)
      out.put(e.turnLanesBackward)
    }
    out.putArray(network.geometry)
    out.put(UInt64(network.names.count))
    for name in network.names {
      let utf8 = Array(name.utf8)
      out.put(UInt32(utf8.count))
      out.bytes.append(contentsOf: utf8)
    }
    out.put(UInt64(network.turnLanes.count))
    for lanes in network.turnLanes { out.putArray(lanes.map(\.rawValue)) }
    out.put(UInt64(network.restrictions.count))
    for r in network.restrictions {
      out.put(r.via)
      out.put(r.fromWay)
      out.put(r.toWay)
      out.put(UInt8(r.isOnly ? 1 : 0))
    }
    out.put(UInt64(network.wayRestrictions.count))
    for r in network.wayRestrictions {
      out.put(r.start)
      out.putArray(r.via)
      out.put(r.fromWay)
      out.put(r.toWay)
      out.put(UInt8(r.isOnly ? 1 : 0))
    }
    out.putArray(CCH.order(graph: TurnGraph(network: network, profile: profile), network: network))
    // Write to a temporary file and rename, so a reader never sees half a graph.
    let temporary = path + ".partial"
    try Data(out.bytes).write(to: URL(fileURLWithPath: temporary))
    if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
    try FileManager.default.moveItem(atPath: temporary, toPath: path)
  }

  /// Whether the file at `path` is a graph file of this format version (read from its header
  /// alone; `read` checks the rest).
  public static func hasCurrentFormat(_ path: String) -> Bool {
    guard let handle = FileHandle(forReadingAtPath: path) else { return false }
    defer { try? handle.close() }
    guard let header = try? handle.read(upToCount: magic.count + 4) else { return false }
    var input = GraphReader(bytes: [UInt8](header), path: path)
    guard input.bytes.starts(with: magic) else { return false }
    input.offset = magic.count
    return (try? input.get() as UInt32) == version
  }

  /// The network, the profile it was built with, and the routing hierarchy's node order.
  public static func read(_ path: String) throws -> (RoadNetwork, CarProfile, [Int32]) {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw FormatError(path: path, offset: 0, reason: "cannot read the file")
    }
    var input = GraphReader(bytes: [UInt8](data), path: path)
    guard input.bytes.count >= magic.count, Array(input.bytes[0..<magic.count]) == magic else {
      throw input.failure("not a FleetKit graph (build one with `fleetd graph build`)")
    }
    input.offset = magic.count
    let fileVersion: UInt32 = try input.get()
    guard fileVersion == version else {
      throw input.failure("format version \(fileVersion); this fleetd reads version \(version): rebuild the graph")
    }
    let profileLength = try input.count(elementSize: 1)
    let profile: CarProfile
    do {
      profile = try JSONDecoder().decode(CarProfile.self, from: Data(try input.take(profileLength)))
    } catch let error as FormatError {
      throw error
    } catch {
      throw input.failure("the profile does not decode (\(error))")
    }

    var network = RoadNetwork()
    let pointCount = try input.count(elementSize: 8)
    network.points.reserveCapacity(pointCount)
    for _ in 0..<pointCount {
      network.points.append(FixedCoordinate(latitudeE6: try input.get(), longitudeE6: try input.get()))
    }
    network.pointNodes = try input.getArray()
    network.junctions = try input.getArray()
    network.blockedJunctions = (try input.getArray() as [UInt8]).map { $0 != 0 }
    let obstacleCount = try input.count(elementSize: 4 + 1 + 4 + 4)
    for _ in 0..<obstacleCount {
      let junction: Int32 = try input.get()
      let kindValue: UInt8 = try input.get()
      guard let kind = Obstacle.Kind(rawValue: kindValue) else { throw input.failure("unknown obstacle \(kindValue)") }
      network.obstacles.append(
        Obstacle(junction: junction, kind: kind, seconds: try input.get(), arrivingBy: try input.get()))
    }
    let edgeCount = try input.count(elementSize: 4 * 4 + 8 + 2 * 18 + 4 * 4 + 8 + 3)
    network.edges.reserveCapacity(edgeCount)
    for _ in 0..<edgeCount {
      let from: Int32 = try input.get()
      let to: Int32 = try input.get()
      let geometryStart: Int32 = try input.get()
      let geometryEnd: Int32 = try input.get()
      let length: Double = try input.get()
      var costs: [EdgeCost?] = []
      for _ in 0..<2 {
        let kind: UInt8 = try input.get()
        let duration: Double = try input.get()
        let weight: Double = try input.get()
        let classes = RoadClasses(rawValue: try input.get())
        costs.append(
          kind == 0 ? nil : EdgeCost(duration: duration, weight: weight, restricted: kind == 2, classes: classes))
      }
      let names: [Int32] = try (0..<5).map { _ in try input.get() }
      let wayID: Int64 = try input.get()
      let flags = RoadFlags(rawValue: try input.get())
      let classValue: UInt8 = try input.get()
      guard let roadClass = RoadClass(rawValue: classValue) else {
        throw input.failure("unknown road class \(classValue)")
      }
      let lanes: UInt8 = try input.get()
      let turnLanes: (UInt32, UInt32) = (try input.get(), try input.get())
      network.edges.append(
        RoadEdge(
          from: from, to: to, geometryStart: geometryStart, geometryEnd: geometryEnd, length: length, forward: costs[0],
          backward: costs[1], nameIndex: names[0], refIndex: names[1], destinationsIndex: names[2],
          exitsIndex: names[3], pronunciationIndex: names[4], wayID: wayID, flags: flags, roadClass: roadClass,
          lanes: lanes,
          turnLanesForward: turnLanes.0, turnLanesBackward: turnLanes.1))
    }
    network.geometry = try input.getArray()
    let nameCount = try input.count(elementSize: 4)
    network.names = []
    for _ in 0..<nameCount {
      let length = Int(try input.get() as UInt32)
      network.names.append(String(decoding: try input.take(length), as: UTF8.self))
    }
    let laneCount = try input.count(elementSize: 8)
    network.turnLanes = try (0..<laneCount).map { _ in
      (try input.getArray() as [UInt16]).map(LaneIndications.init(rawValue:))
    }
    let restrictionCount = try input.count(elementSize: 4 + 8 + 8 + 1)
    for _ in 0..<restrictionCount {
      network.restrictions.append(
        TurnRestriction(
          via: try input.get(), fromWay: try input.get(), toWay: try input.get(),
          isOnly: (try input.get() as UInt8) != 0))
    }
    let wayRestrictionCount = try input.count(elementSize: 4 + 8 + 8 + 8 + 1)
    for _ in 0..<wayRestrictionCount {
      let start: Int32 = try input.get()
      let via: [Int32] = try input.getArray()
      network.wayRestrictions.append(
        WayRestriction(
          fromWay: try input.get(), start: start, via: via, toWay: try input.get(),
          isOnly: (try input.get() as UInt8) != 0))
    }
    let order: [Int32] = try input.getArray()
    guard input.offset == input.bytes.count else { throw input.failure("unexpected bytes after the graph") }
    try validate(network, input)
    // One node per drivable direction of an edge, and one per road a via-way restriction copies.
    guard order.count >= network.edges.count * 2 else { throw input.failure("the node order does not fit the graph") }
    return (network, profile, order)
  }

  /// Every index in range, so a damaged file fails here instead of crashing a query later.
  static func validate(_ network: RoadNetwork, _ input: GraphReader) throws {
    let points = Int32(network.points.count)
    let junctions = Int32(network.junctions.count)
    let directedEdges = Int32(network.edges.count * 2)
    guard network.blockedJunctions.count == network.junctions.count,
      network.pointNodes.isEmpty || network.pointNodes.count == network.points.count,
      network.obstacles.allSatisfy({ $0.junction >= 0 && $0.junction < junctions && $0.arrivingBy < directedEdges }),
      network.junctions.allSatisfy({ $0 >= 0 && $0 < points }),
      network.geometry.allSatisfy({ $0 >= 0 && $0 < points }),
      network.restrictions.allSatisfy({ $0.via >= 0 && $0.via < junctions }),
      network.wayRestrictions.allSatisfy({ r in
        r.start >= 0 && r.start < junctions && !r.via.isEmpty
          && r.via.allSatisfy { $0 >= 0 && Int($0) < network.edges.count }
      }),
      !network.names.isEmpty, network.turnLanes.first?.isEmpty == true
    else { throw input.failure("indices out of range") }
    for edge in network.edges {
      guard edge.from >= 0, edge.from < junctions, edge.to >= 0, edge.to < junctions, edge.geometryStart >= 0,
        edge.geometryEnd - edge.geometryStart >= 2, Int(edge.geometryEnd) <= network.geometry.count,
        edge.labelIndices.allSatisfy({
          $0 >= 0 && Int($0) < network.names.count
        }), edge.length.isFinite, Int(edge.turnLanesForward) < network.turnLanes.count,
        Int(edge.turnLanesBackward) < network.turnLanes.count
      else { throw input.failure("an edge refers outside the graph") }
    }
  }
}

struct GraphWriter {
  var bytes: [UInt8] = []

  mutating func put<T: FixedWidthInteger>(_ value: T) {
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
  }
  mutating func put(_ value: Double) { put(value.bitPattern) }
  mutating func put(_ value: Float) { put(value.bitPattern) }

  mutating func putArray<T: FixedWidthInteger>(_ values: [T]) {
    put(UInt64(values.count))
    for v in values { put(v) }
  }
  mutating func putArray(_ values: [Float]) {
    put(UInt64(values.count))
    for v in values { put(v) }
  }
}

struct GraphReader {
  let bytes: [UInt8]
  let path: String
  var offset = 0

  func failure(_ reason: String) -> GraphFile.FormatError {
    GraphFile.FormatError(path: path, offset: offset, reason: reason)
  }

  mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
    guard count >= 0, bytes.count - offset >= count else { throw failure("the file ends early") }
    defer { offset += count }
    return bytes[offset..<offset + count]
  }

  mutating func get<T: FixedWidthInteger>() throws -> T {
    let raw = try take(MemoryLayout<T>.size)
    var value = T.zero
    for (i, byte) in raw.enumerated() { value |= T(truncatingIfNeeded: byte) << (8 * i) }
    return value
  }
  mutating func get() throws -> Double { Double(bitPattern: try get()) }
  mutating func get() throws -> Float { Float(bitPattern: try get()) }

  /// A count of elements that must fit in what is left of the file.
  mutating func count(elementSize: Int) throws -> Int {
    let n: UInt64 = try get()
    guard n <= UInt64((bytes.count - offset) / max(elementSize, 1)) else {
      throw failure("count \(n) exceeds the file")
    }
    return Int(n)
  }

  mutating func getArray<T: FixedWidthInteger>() throws -> [T] {
    let n = try count(elementSize: MemoryLayout<T>.size)
    var values: [T] = []
    values.reserveCapacity(n)
    for _ in 0..<n { values.append(try get()) }
    return values
  }
  mutating func getArray() throws -> [Float] {
    let n = try count(elementSize: 4)
    var values: [Float] = []
    values.reserveCapacity(n)
    for _ in 0..<n { values.append(try get()) }
    return values
  }
}
