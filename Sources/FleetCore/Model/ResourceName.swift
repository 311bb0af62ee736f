import Foundation

/// Resource IDs and names as Fleet Engine defines them: `providers/{provider}/trips/{trip}` and
/// `providers/{provider}/vehicles/{vehicle}`.
public enum ResourceID {
  static let forbidden: Set<Character> = ["/", ":", "?", ",", "#"]
  static let forbiddenBytes: Set<UInt8> = Set("/:?,#".utf8)

  /// Fleet Engine: at most 64 characters, NFC-normalized, none of `/ : ? , #`.
  public static func validate(_ id: String, field: String) throws(FleetError) {
    guard !id.isEmpty else { throw .invalid("\(field) is required") }
    let ascii = id.utf8.allSatisfy { $0 < 0x80 }
    let length = ascii ? id.utf8.count : id.count
    guard length <= 64 else { throw .invalid("\(field) must be at most 64 characters, got \(length)") }
    // ASCII is always NFC; only other text needs the (costly) normalization check.
    if !ascii && !id.precomposedStringWithCanonicalMapping.unicodeScalars.elementsEqual(id.unicodeScalars) {
      throw .invalid("\(field) must be normalized to Unicode NFC")
    }
    if id.utf8.contains(where: { forbiddenBytes.contains($0) }), let bad = id.first(where: { forbidden.contains($0) }) {
      throw .invalid("\(field) must not contain '\(bad)' (forbidden: / : ? , #)")
    }
  }

  public static func validateProvider(_ provider: String, field: String) throws(FleetError) {
    guard !provider.isEmpty else { throw .invalid("\(field) must name a provider: providers/{provider}") }
    try validate(provider, field: field)
  }
}

public struct ProviderName: Sendable, Hashable {
  public var provider: String

  public init(provider: String) { self.provider = provider }

  /// Parses `providers/{provider}`.
  public init(parsing parent: String, field: String = "parent") throws(FleetError) {
    let parts = parent.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, parts[0] == "providers", !parts[1].isEmpty else {
      throw .invalid("\(field) must be 'providers/{provider}', got '\(parent)'")
    }
    provider = String(parts[1])
    try ResourceID.validateProvider(provider, field: field)
  }

  public var name: String { "providers/\(provider)" }
}

public enum ResourceKind: String, Sendable {
  case trips, vehicles, billableTrips, rides
  /// The Deliveries API's.
  case deliveryVehicles, tasks, taskTrackingInfo
}

/// A name such as `providers/p/trips/t`.
public struct ResourceName: Sendable, Hashable, CustomStringConvertible {
  public var provider: String
  public var kind: ResourceKind
  public var id: String

  public init(provider: String, kind: ResourceKind, id: String) {
    self.provider = provider
    self.kind = kind
    self.id = id
  }

  public init(parsing name: String, kind: ResourceKind, field: String = "name") throws(FleetError) {
    // The name's three slashes, found in its bytes: every call and every report parses a name,
    // and splitting it into an array cost more than the rest of the parse.
    let utf8 = name.utf8
    let slash = UInt8(ascii: "/")
    let malformed = {
      FleetError.invalid("\(field) must be 'providers/{provider}/\(kind.rawValue)/{id}', got '\(name)'")
    }
    guard let first = utf8.firstIndex(of: slash),
      let second = utf8[utf8.index(after: first)...].firstIndex(of: slash),
      let third = utf8[utf8.index(after: second)...].firstIndex(of: slash),
      !utf8[utf8.index(after: third)...].contains(slash)
    else { throw malformed() }
    let providerPart = name[utf8.index(after: first)..<second]
    let idPart = name[utf8.index(after: third)...]
    guard name[..<first] == "providers", name[utf8.index(after: second)..<third] == kind.rawValue,
      !providerPart.isEmpty, !idPart.isEmpty
    else { throw malformed() }
    provider = String(providerPart)
    self.kind = kind
    id = String(idPart)
    try ResourceID.validateProvider(provider, field: field)
    try ResourceID.validate(id, field: field)
  }

  public var description: String { "providers/\(provider)/\(kind.rawValue)/\(id)" }
}
