import ArgumentParser
import FleetAuth
import FleetCore
import Foundation

struct KeysCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "keys", abstract: "Manage the keys that sign tokens.",
    subcommands: [Add.self, List.self, Revoke.self])

  struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Create a key pair, register its public half, write the private half as a service-account JSON file.")
    @OptionGroup var store: StoreOptions
    @Option(help: "Provider (project) the key belongs to.")
    var provider: String
    @Option(help: "admin, server, driver, consumer or viewer.")
    var role: String
    @Option(help: "Where to write the service-account JSON file.")
    var out: String

    func run() async throws {
      guard let role = Role(rawValue: role) else {
        throw ValidationError("--role must be one of \(Role.allCases.map(\.rawValue).joined(separator: ", "))")
      }
      let file = try await store.withStore { try await KeyRing(store: $0).add(provider: provider, role: role) }
      try file.encoded().write(to: URL(fileURLWithPath: out), options: .atomic)
      try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: out)
      print("registered key \(file.privateKeyID) (provider \(provider), role \(role.rawValue)); private key in \(out)")
    }
  }

  struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List registered keys.")
    @OptionGroup var store: StoreOptions

    func run() async throws {
      let keys = try await store.withStore { try await KeyRing(store: $0).list() }
      print("KEY ID".padding(toLength: 26, withPad: " ", startingAt: 0) + "PROVIDER            ROLE      STATE")
      for key in keys {
        let state = key.revokeTime.map { "revoked \(ISO8601DateFormatter().string(from: $0))" } ?? "active"
        print(
          key.keyID.padding(toLength: 26, withPad: " ", startingAt: 0)
            + key.provider.padding(toLength: 20, withPad: " ", startingAt: 0)
            + key.role.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0) + state)
      }
    }
  }

  struct Revoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Revoke a key; a running fleetd rejects its tokens within seconds.")
    @OptionGroup var store: StoreOptions
    @Argument(help: "The key ID (private_key_id).")
    var keyID: String

    func run() async throws {
      try await store.withStore { try await KeyRing(store: $0).revoke(keyID: keyID) }
      print("revoked key \(keyID)")
    }
  }
}
