import ArgumentParser
import FleetCore
import FleetServer
import FleetStorePostgres
import Logging

/// Where the fleet is kept, the same in every command that reads or writes it: the data
/// directory (SQLite, and the caches) and, for several instances, a PostgreSQL database.
struct StoreOptions: ParsableArguments {
  @Option(help: "Data directory: the SQLite store and the caches (env FLEETD_DATA_DIR).")
  var dataDir = environment("FLEETD_DATA_DIR") ?? "./fleet-data"
  @Option(
    help: ArgumentHelp(
      "Keep the fleet in PostgreSQL instead of SQLite, shared by every fleetd given the same URL (env FLEETD_STORE).",
      valueName: "postgres://user@host:port/db"))
  var store: String?

  func validate() throws {
    do { _ = try postgres } catch { throw ValidationError(error.message) }
  }

  /// The PostgreSQL address, or nil for SQLite in the data directory.
  var postgres: PostgresAddress? {
    get throws(FleetError) {
      guard let url = store ?? environment("FLEETD_STORE"), !url.isEmpty else { return nil }
      return try PostgresAddress(url)
    }
  }

  /// Opens the store for a command that runs briefly (keys, API keys); `body` runs with it.
  func withStore<T>(_ body: (any ServerStore) async throws -> T) async throws -> T {
    var logger = Logger(label: "fleetd")
    logger.logLevel = .warning
    let store = try await StoreOpener.open(dataDirectory: dataDir, postgres: try postgres, logger: logger)
    do {
      let result = try await body(store)
      await store.close()
      return result
    } catch {
      await store.close()
      throw error
    }
  }
}
