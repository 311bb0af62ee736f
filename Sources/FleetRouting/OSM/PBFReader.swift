import CZlib
import Foundation
import OSMProto
import SwiftProtobuf

/// Why an OSM file could not be read. Offsets are byte positions in the file, so a damaged
/// download can be diagnosed (and compared with `ls -l`).
public struct OSMFileError: Error, Sendable, CustomStringConvertible {
  public enum Kind: Sendable { case cannotOpen, truncated, corrupt, unsupported }

  public let kind: Kind
  public let path: String
  public let offset: Int
  public let reason: String

  public var description: String {
    switch kind {
    case .cannotOpen: "cannot open \(path): \(reason)"
    case .truncated: "\(path) is truncated at byte \(offset): \(reason)"
    case .corrupt: "\(path) is corrupt at byte \(offset): \(reason)"
    case .unsupported: "\(path) at byte \(offset): \(reason)"
    }
  }
}

/// A node, way or relation with its tags, as the PBF reader hands them out.
public struct OSMTags: Sendable {
  public var pairs: [(key: String, value: String)] = []

  public init(_ pairs: [(key: String, value: String)] = []) { self.pairs = pairs }

  public subscript(key: String) -> String? {
    for pair in pairs where pair.key == key { return pair.value }
    return nil
  }

  public var isEmpty: Bool { pairs.isEmpty }
}

public struct OSMNode: Sendable {
  public var id: Int64
  public var latitude: Double
  public var longitude: Double
  public var tags: OSMTags

  public init(id: Int64, latitude: Double, longitude: Double, tags: OSMTags) {
    self.id = id
    self.latitude = latitude
    self.longitude = longitude
    self.tags = tags
  }
}

public struct OSMWay: Sendable {
  public var id: Int64
  public var nodeIDs: [Int64]
  public var tags: OSMTags

  public init(id: Int64, nodeIDs: [Int64], tags: OSMTags) {
    self.id = id
    self.nodeIDs = nodeIDs
    self.tags = tags
  }
}

public struct OSMRelation: Sendable {
  public enum MemberType: Sendable { case node, way, relation }
  public struct Member: Sendable {
    public var type: MemberType
    public var id: Int64
    public var role: String

    public init(type: MemberType, id: Int64, role: String) {
      self.type = type
      self.id = id
      self.role = role
    }
  }

  public var id: Int64
  public var members: [Member]
  public var tags: OSMTags

  public init(id: Int64, members: [Member], tags: OSMTags) {
    self.id = id
    self.members = members
    self.tags = tags
  }
}

/// What a pass over the file wants: skipping node decoding when only ways are needed halves the
/// work of the first pass.
public struct OSMElementKinds: OptionSet, Sendable {
  public let rawValue: Int
  public init(rawValue: Int) { self.rawValue = rawValue }
  public static let nodes = OSMElementKinds(rawValue: 1)
  public static let ways = OSMElementKinds(rawValue: 2)
  public static let relations = OSMElementKinds(rawValue: 4)
}

/// Anything that can hand out OSM elements in file order (nodes, then ways, then relations):
/// a PBF file, or hand-drawn maps in tests.
public protocol OSMElementSource {
  func read(
    _ kinds: OSMElementKinds, node: (OSMNode) throws -> Void, way: (OSMWay) throws -> Void,
    relation: (OSMRelation) throws -> Void) throws
}

/// Reads an OpenStreetMap `.osm.pbf` file one blob at a time, so memory stays at one block
/// (at most 32 MiB by the format) whatever the file's size.
public struct PBFReader: OSMElementSource, Sendable {
  public let path: String

  /// The format's limits: a BlobHeader under 64 KiB, a blob under 32 MiB.
  static let maximumHeaderSize = 64 * 1024
  static let maximumBlobSize = 32 * 1024 * 1024
  /// Features this reader understands.
  static let supportedFeatures: Set<String> = ["OsmSchema-V0.6", "DenseNodes", "HistoricalInformation"]

  public init(path: String) { self.path = path }

  /// Calls back for every element of the requested kinds, in file order.
  public func read(
    _ kinds: OSMElementKinds,
    node: (OSMNode) throws -> Void = { _ in },
    way: (OSMWay) throws -> Void = { _ in },
    relation: (OSMRelation) throws -> Void = { _ in }
  ) throws {
    guard let file = FileHandle(forReadingAtPath: path) else {
      throw OSMFileError(kind: .cannotOpen, path: path, offset: 0, reason: "no such readable file")
    }
    defer { try? file.close() }
    var offset = 0
    var sawHeader = false
    while true {
      let blobStart = offset
      guard let lengthBytes = try readExactly(file, 4, at: &offset, what: "blob header length", allowEOF: true) else {
        break
      }
      let headerLength = lengthBytes.reduce(0) { $0 << 8 | Int($1) }
      guard headerLength > 0, headerLength < Self.maximumHeaderSize else {
        throw error(.corrupt, blobStart, "blob header length \(headerLength) is outside 1..<\(Self.maximumHeaderSize)")
      }
      let headerBytes = try readExactly(file, headerLength, at: &offset, what: "blob header")!
      let header: Osmpbf_BlobHeader
      do {
        header = try Osmpbf_BlobHeader(serializedBytes: headerBytes)
      } catch {
        throw self.error(.corrupt, blobStart + 4, "blob header does not decode (\(error))")
      }
      let size = Int(header.datasize)
      guard size >= 0, size <= Self.maximumBlobSize else {
        throw error(.corrupt, blobStart + 4, "blob size \(size) is outside 0...\(Self.maximumBlobSize)")
      }
      let blobOffset = offset
      let blobBytes = try readExactly(file, size, at: &offset, what: "\(header.type) blob")!
      switch header.type {
      case "OSMHeader":
        try checkHeader(try inflate(blobBytes, at: blobOffset), at: blobOffset)
        sawHeader = true
      case "OSMData":
        guard sawHeader else { throw error(.corrupt, blobStart, "data before the OSMHeader blob") }
        let block: Osmpbf_PrimitiveBlock
        do {
          block = try Osmpbf_PrimitiveBlock(serializedBytes: try inflate(blobBytes, at: blobOffset))
        } catch let error as OSMFileError {
          throw error
        } catch {
          throw self.error(.corrupt, blobOffset, "data block does not decode (\(error))")
        }
        try PrimitiveBlockDecoder(block: block, blockOffset: blobOffset, path: path)
          .decode(kinds, node: node, way: way, relation: relation)
      default:
        continue  // The format lets readers skip blob types they do not know.
      }
    }
    guard sawHeader else { throw error(.corrupt, 0, "no OSMHeader blob: not an OSM PBF file") }
  }

  func error(_ kind: OSMFileError.Kind, _ offset: Int, _ reason: String) -> OSMFileError {
    OSMFileError(kind: kind, path: path, offset: offset, reason: reason)
  }

  /// Reads exactly `count` bytes; nil only at a clean end of file when `allowEOF`.
  func readExactly(_ file: FileHandle, _ count: Int, at offset: inout Int, what: String, allowEOF: Bool = false)
    throws -> Data?
  {
    let data: Data
    do {
      data = try file.read(upToCount: count) ?? Data()
    } catch {
      throw self.error(.truncated, offset, "read failed (\(error))")
    }
    if data.isEmpty && allowEOF { return nil }
    guard data.count == count else {
      throw error(.truncated, offset + data.count, "expected \(count) bytes of \(what), found \(data.count)")
    }
    offset += count
    return data
  }

  func inflate(_ bytes: Data, at offset: Int) throws -> Data {
    let blob: Osmpbf_Blob
    do {
      blob = try Osmpbf_Blob(serializedBytes: bytes)
    } catch {
      throw self.error(.corrupt, offset, "blob does not decode (\(error))")
    }
    switch blob.data {
    case .raw(let raw)?: return raw
    case .zlibData(let compressed)?:
      let size = Int(blob.rawSize)
      guard size > 0, size <= Self.maximumBlobSize else {
        throw error(.corrupt, offset, "raw_size \(blob.rawSize) is outside 1...\(Self.maximumBlobSize)")
      }
      var output = Data(count: size)
      var produced = uLongf(size)
      let status = output.withUnsafeMutableBytes { out in
        compressed.withUnsafeBytes { input in
          uncompress(
            out.baseAddress!.assumingMemoryBound(to: Bytef.self), &produced,
            input.baseAddress?.assumingMemoryBound(to: Bytef.self), uLong(compressed.count))
        }
      }
      guard status == Z_OK, Int(produced) == size else {
        throw error(.corrupt, offset, "zlib data does not inflate to raw_size \(size) (zlib status \(status))")
      }
      return output
    case .lzmaData?, .obsoleteBzip2Data?, .lz4Data?, .zstdData?:
      throw error(.unsupported, offset, "blob compression other than zlib is not supported")
    case nil:
      throw error(.corrupt, offset, "blob has no data")
    }
  }

  func checkHeader(_ bytes: Data, at offset: Int) throws {
    let header: Osmpbf_HeaderBlock
    do {
      header = try Osmpbf_HeaderBlock(serializedBytes: bytes)
    } catch {
      throw self.error(.corrupt, offset, "OSMHeader does not decode (\(error))")
    }
    for feature in header.requiredFeatures where !Self.supportedFeatures.contains(feature) {
      throw error(.unsupported, offset, "the file requires feature '\(feature)', which this reader does not support")
    }
  }
}

/// Turns one PrimitiveBlock into elements: string table lookups, delta decoding, granularity.
struct PrimitiveBlockDecoder {
  let block: Osmpbf_PrimitiveBlock
  let blockOffset: Int
  let path: String
  let strings: [String]

  init(block: Osmpbf_PrimitiveBlock, blockOffset: Int, path: String) {
    self.block = block
    self.blockOffset = blockOffset
    self.path = path
    strings = block.stringtable.s.map { String(decoding: $0, as: UTF8.self) }
  }

  func corrupt(_ reason: String) -> OSMFileError {
    OSMFileError(kind: .corrupt, path: path, offset: blockOffset, reason: reason)
  }

  func string(_ index: Int) throws -> String {
    guard index >= 0, index < strings.count else { throw corrupt("string index \(index) outside the block's table") }
    return strings[index]
  }

  func tags(_ keys: [UInt32], _ values: [UInt32]) throws -> OSMTags {
    guard keys.count == values.count else { throw corrupt("\(keys.count) tag keys but \(values.count) values") }
    var pairs: [(key: String, value: String)] = []
    pairs.reserveCapacity(keys.count)
    for i in keys.indices { pairs.append((try string(Int(keys[i])), try string(Int(values[i])))) }
    return OSMTags(pairs)
  }

  func coordinate(_ raw: Int64, offset: Int64) -> Double {
    Double(offset &+ Int64(block.granularity) &* raw) * 1e-9
  }

  func decode(
    _ kinds: OSMElementKinds, node: (OSMNode) throws -> Void, way: (OSMWay) throws -> Void,
    relation: (OSMRelation) throws -> Void
  ) throws {
    for group in block.primitivegroup {
      if kinds.contains(.nodes) {
        for n in group.nodes {
          try node(
            OSMNode(
              id: n.id, latitude: coordinate(n.lat, offset: block.latOffset),
              longitude: coordinate(n.lon, offset: block.lonOffset), tags: try tags(n.keys, n.vals)))
        }
        if group.hasDense { try decodeDense(group.dense, node) }
      }
      if kinds.contains(.ways) {
        for w in group.ways {
          var id: Int64 = 0
          let refs = w.refs.map { delta -> Int64 in
            id &+= delta
            return id
          }
          try way(OSMWay(id: w.id, nodeIDs: refs, tags: try tags(w.keys, w.vals)))
        }
      }
      if kinds.contains(.relations) {
        for r in group.relations {
          guard r.memids.count == r.types.count, r.memids.count == r.rolesSid.count else {
            throw corrupt("relation \(r.id) has member lists of different lengths")
          }
          var id: Int64 = 0
          var members: [OSMRelation.Member] = []
          members.reserveCapacity(r.memids.count)
          for i in r.memids.indices {
            id &+= r.memids[i]
            let type: OSMRelation.MemberType =
              switch r.types[i] {
              case .node: .node
              case .way: .way
              case .relation: .relation
              }
            members.append(.init(type: type, id: id, role: try string(Int(r.rolesSid[i]))))
          }
          try relation(OSMRelation(id: r.id, members: members, tags: try tags(r.keys, r.vals)))
        }
      }
    }
  }

  func decodeDense(_ dense: Osmpbf_DenseNodes, _ node: (OSMNode) throws -> Void) throws {
    guard dense.id.count == dense.lat.count, dense.id.count == dense.lon.count else {
      throw corrupt(
        "dense nodes with \(dense.id.count) ids, \(dense.lat.count) latitudes, \(dense.lon.count) longitudes")
    }
    var id: Int64 = 0
    var lat: Int64 = 0
    var lon: Int64 = 0
    var cursor = 0
    let keysValues = dense.keysVals
    for i in dense.id.indices {
      id &+= dense.id[i]
      lat &+= dense.lat[i]
      lon &+= dense.lon[i]
      var pairs: [(key: String, value: String)] = []
      // keys_vals is empty when no node in the block has tags.
      if !keysValues.isEmpty {
        while true {
          guard cursor < keysValues.count else { throw corrupt("dense node tags end early") }
          let key = Int(keysValues[cursor])
          cursor += 1
          if key == 0 { break }
          guard cursor < keysValues.count else { throw corrupt("dense node tag without a value") }
          pairs.append((try string(key), try string(Int(keysValues[cursor]))))
          cursor += 1
        }
      }
      try node(
        OSMNode(
          id: id, latitude: coordinate(lat, offset: block.latOffset),
          longitude: coordinate(lon, offset: block.lonOffset),
          tags: OSMTags(pairs)))
    }
  }
}
