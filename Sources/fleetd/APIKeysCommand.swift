import ArgumentParser
import FleetAuth
import FleetCore
import Foundation

struct APIKeysCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "apikeys",
    abstract: "Manage apps' API keys for the geo endpoints (/fleetkit/v1/geo:reverse, /fleetkit/v1/places:search).",
    subcommands: [Add.self, List.self, Revoke.self])

  struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Make a key for an app and print it; it is shown only this once.")
    @OptionGroup var store: StoreOptions
    @Option(help: "The app the key is for.")
    var app: String
    @Option(help: "Requests per minute.")
    var perMinute = APIKeyRecord.defaultPerMinute
    @Option(help: "Requests per UTC day.")
    var perDay = APIKeyRecord.defaultPerDay

    func run() async throws {
      let (key, record) = try await store.withStore {
        try await APIKeyRing(store: $0).add(app: app, perMinute: perMinute, perDay: perDay)
      }
      print(key)
      FileHandle.standardError.write(
        Data(
          "registered API key \(record.id) for \(record.app): \(record.perMinute)/minute, \(record.perDay)/day\n".utf8))
    }
  }

  struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List API keys (IDs only; secrets are not kept).")
    @OptionGroup var store: StoreOptions

    func run() async throws {
      let keys = try await store.withStore { try await APIKeyRing(store: $0).list() }
      print("KEY ID        APP                 PER MINUTE  PER DAY     STATE")
      for key in keys {
        let state = key.revokeTime.map { "revoked \(ISO8601DateFormatter().string(from: $0))" } ?? "active"
        print(
          key.id.padding(toLength: 14, withPad: " ", startingAt: 0)
            + key.app.padding(toLength: 20, withPad: " ", startingAt: 0)
            + String(key.perMinute).padding(toLength: 12, withPad: " ", startingAt: 0)
            + String(key.perDay).padding(toLength: 12, withPad: " ", startingAt: 0) + state)
      }
    }
  }

  struct Revoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Revoke a key; a running fleetd refuses it within seconds.")
    @OptionGroup var store: StoreOptions
    @Argument(help: "The key ID (from 'fleetd apikeys list').")
    var id: String

    func run() async throws {
      try await store.withStore { try await APIKeyRing(store: $0).revoke(id: id) }
      print("revoked API key \(id)")
    }
  }
}
