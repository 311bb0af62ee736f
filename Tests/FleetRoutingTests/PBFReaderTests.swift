import FleetGeometry
import FleetTestSupport
import Foundation
import Testing

@testable import FleetRouting

/// The Monaco extract and its route queries, in the repository's `data/`.
enum MonacoData {
  static var monaco: String { monacoOSM }
  static var monacoRequests: String { projectData.appendingPathComponent("monaco.requests").path }
}

func temporaryFile(_ name: String) -> String {
  NSTemporaryDirectory() + "fleetkit-\(UUID().uuidString)-\(name)"
}

@Suite("OSM PBF reader")
struct PBFReaderTests {
  @Test func readsTheMonacoExtract() async throws {
    struct Counts: Sendable {
      var nodes = 0
      var ways = 0
      var relations = 0
      var taggedNodes = 0
      var inMonaco = true
      var maxRef: Int64 = 0
    }
    // Decoding the whole extract is seconds of CPU in a debug build: on a thread of its own, not
    // one every test shares.
    let counts = try await onDedicatedThread(named: "pbf-read-test") {
      var counts = Counts()
      try PBFReader(path: MonacoData.monaco).read(
        [.nodes, .ways, .relations],
        node: { node in
          counts.nodes += 1
          if !node.tags.isEmpty { counts.taggedNodes += 1 }
          counts.inMonaco =
            counts.inMonaco && (43.5...43.9).contains(node.latitude) && (7.3...7.6).contains(node.longitude)
        },
        way: { way in
          counts.ways += 1
          counts.maxRef = max(counts.maxRef, way.nodeIDs.max() ?? 0)
        },
        relation: { _ in counts.relations += 1 })
      return counts
    }
    // The shared README: 180k nodes, 27k ways.
    #expect((170_000...190_000).contains(counts.nodes))
    #expect((25_000...29_000).contains(counts.ways))
    #expect(counts.relations > 100)
    #expect(counts.taggedNodes > 1000)
    #expect(counts.inMonaco)
    #expect(counts.maxRef > 1_000_000)
  }

  @Test func tagsAndRelationMembersAreDecoded() async throws {
    // On a thread of its own, as above.
    let (restrictions, withoutFromWay, namedRoads) = try await onDedicatedThread(named: "pbf-read-test") {
      var restrictions = 0
      var withoutFromWay = 0
      var namedRoads = Set<String>()
      try PBFReader(path: MonacoData.monaco).read(
        [.ways, .relations],
        way: { way in
          if way.tags["highway"] != nil, let name = way.tags["name"] { namedRoads.insert(name) }
        },
        relation: { relation in
          guard relation.tags["type"] == "restriction" else { return }
          restrictions += 1
          if !relation.members.contains(where: { $0.role == "from" && $0.type == .way }) { withoutFromWay += 1 }
        })
      return (restrictions, withoutFromWay, namedRoads)
    }
    #expect(withoutFromWay == 0, "every restriction has a from way")
    let expected = ["Boulevard Albert 1er", "Boulevard Princesse Charlotte", "Avenue Princesse Grace"]
    #expect(expected.filter { !namedRoads.contains($0) } == [])
    #expect(namedRoads.count > 300)
    #expect(restrictions > 10)
  }

  @Test func aTruncatedFileNamesTheOffset() throws {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: MonacoData.monaco))
    let path = temporaryFile("truncated.osm.pbf")
    defer { try? FileManager.default.removeItem(atPath: path) }
    try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path))
    do {
      try PBFReader(path: path).read([.nodes, .ways])
      Issue.record("a truncated file was read without an error")
    } catch let error as OSMFileError {
      #expect(error.kind == .truncated)
      #expect(error.offset == bytes.count / 2)
      #expect(error.description.contains("truncated at byte \(bytes.count / 2)"))
    }
  }

  @Test func corruptBytesGiveAnErrorNotACrash() throws {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: MonacoData.monaco))
    let path = temporaryFile("corrupt.osm.pbf")
    defer { try? FileManager.default.removeItem(atPath: path) }
    // Damage in the compressed data of a block, in a length prefix, and at the very start.
    for position in [bytes.count / 3, 0, 2] {
      var damaged = bytes
      for i in position..<min(position + 16, damaged.count) { damaged[i] ^= 0x5A }
      try damaged.write(to: URL(fileURLWithPath: path))
      #expect(throws: OSMFileError.self) { try PBFReader(path: path).read([.nodes, .ways, .relations]) }
    }
    try Data("not a pbf at all".utf8).write(to: URL(fileURLWithPath: path))
    #expect(throws: OSMFileError.self) { try PBFReader(path: path).read([.nodes]) }
    try Data().write(to: URL(fileURLWithPath: path))
    #expect(throws: OSMFileError.self) { try PBFReader(path: path).read([.nodes]) }
    #expect(throws: OSMFileError.self) { try PBFReader(path: "/nonexistent/x.osm.pbf").read([.nodes]) }
  }
}
