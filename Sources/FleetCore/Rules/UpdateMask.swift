import Foundation

/// Field masks: the paths a client may set, the ones the server owns, and nothing else.
struct UpdateMask {
  let paths: Set<String>

  init(_ raw: [String], updatable: Set<String>, serverOwned: Set<String>, resource: String) throws(FleetError) {
    let paths = FieldPaths.split(raw)
    // Fleet Engine's wording.
    guard !paths.isEmpty else { throw .invalid("update_mask cannot be empty") }
    for path in paths {
      if serverOwned.contains(path) {
        throw .invalid("update_mask: \(resource).\(path) is maintained by the server and cannot be updated")
      }
      guard updatable.contains(path) else {
        throw .invalid("update_mask: '\(path)' is not an updatable field of \(resource)")
      }
    }
    self.paths = Set(paths)
  }

  func contains(_ path: String) -> Bool { paths.contains(path) }
}

/// A field mask's paths, one per entry (a client may send `a,b` in one, with spaces).
public enum FieldPaths {
  public static func split(_ raw: [String]) -> [String] {
    // Usually already one clean path per entry; split and trim only when needed.
    let clean = raw.allSatisfy { !$0.isEmpty && !$0.utf8.contains(where: { $0 == 0x2C || $0 == 0x20 }) }
    return clean
      ? raw
      : raw.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
  }
}
