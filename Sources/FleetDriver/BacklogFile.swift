import FleetPositioning
import Foundation

/// The reporter's backlog on disk, so that positions fleetd has not acknowledged survive an
/// app restart. Rewritten whole (it is small) and atomically, so a crash leaves the old or the
/// new list, never half of one.
struct BacklogFile: Sendable {
  let url: URL

  init(url: URL) { self.url = url }

  func load() -> [LocationFix] {
    guard let data = try? Data(contentsOf: url) else { return [] }
    return (try? JSONDecoder().decode([LocationFix].self, from: data)) ?? []
  }

  func save(_ backlog: [LocationFix]) {
    if backlog.isEmpty {
      try? FileManager.default.removeItem(at: url)
      return
    }
    guard let data = try? JSONEncoder().encode(backlog) else { return }
    try? data.write(to: url, options: .atomic)
  }
}
