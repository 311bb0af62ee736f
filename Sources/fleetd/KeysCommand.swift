import ArgumentParser
import FleetAuth
import FleetCore
import Foundation

struct KeysCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "keys", abstract: "Manage the keys that sign tokens.",
    subcommands: [Add.self, Import.self, List.self, Revoke.self])

  struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Create a key pair, register its public half, write the private half as a service-account JSON file.")
    @OptionGroup var store: StoreOptions
    @Option(help: "Provider (project) the key belongs to.")
    var provider: String
    @Option(
      help: ArgumentHelp("The key's role: \(Role.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "role")
    )
    var role: String
    @Option(help: "Where to write the service-account JSON file.")
    var out: String
    @Option(
      help: "fleetd's HTTP address as the key's users reach it, for the file's URLs (default http://127.0.0.1:8080).")
    var url = KeyRing.defaultServer.absoluteString

    func run() async throws {
      let role = try parseRole(role)
      guard let server = URL(string: url), ["http", "https"].contains(server.scheme ?? ""), server.host != nil else {
        throw ValidationError(
          "--url must be an http or https address such as http://fleet.example.com:8080, got '\(url)'")
      }
      let file = try await store.withStore {
        try await KeyRing(store: $0).add(provider: provider, role: role, server: server)
      }
      try file.encoded().write(to: URL(fileURLWithPath: out), options: .atomic)
      try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: out)
      print("registered key \(file.privateKeyID) (provider \(provider), role \(role.rawValue)); private key in \(out)")
    }
  }

  struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract:
        "Trust a key made elsewhere: register the public half of a service-account JSON file (Google's own, or another fleetd's)."
    )
    @OptionGroup var store: StoreOptions
    @Option(help: "The service-account JSON file.")
    var key: String
    @Option(
      help: ArgumentHelp("The key's role: \(Role.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "role")
    )
    var role: String
    @Option(help: "Provider (project) the key belongs to (default: the file's project_id).")
    var provider: String?

    func run() async throws {
      let role = try parseRole(role)
      let file: ServiceAccountKey
      do {
        file = try ServiceAccountKey.load(path: key)
      } catch {
        throw ValidationError("--key \(key) is not a service-account JSON file: \(error)")
      }
      let registered = try await store.withStore {
        try await KeyRing(store: $0).importKey(file, provider: provider, role: role)
      }
      print(
        "registered key \(registered.keyID) of \(registered.clientEmail) (provider \(registered.provider), role \(role.rawValue))"
      )
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

/// `--role`'s value, or the roles there are.
func parseRole(_ text: String) throws -> Role {
  guard let role = Role(rawValue: text) else {
    throw ValidationError(
      "--role must be one of \(Role.allCases.map(\.rawValue).joined(separator: ", ")), got '\(text)'")
  }
  return role
}
