import FleetCore
import FleetStorePostgres
import FleetStoreSQLite
import Logging

/// What fleetd keeps the fleet in: the embedded SQLite file in its data directory (the default),
/// or a PostgreSQL database that several fleetd instances share (`--store postgres://…`).
public protocol ServerStore: FleetStore, APIKeyStore, SecretStore, WebhookStore, TrafficProfileStore {
  /// Releases connections; nothing is written after it.
  func close() async
}

extension SQLiteStore: ServerStore {
  public func close() async {}
}

extension PostgresStore: ServerStore {}

public enum StoreOpener {
  /// PostgreSQL when `postgres` is given (any number of fleetd instances may share it), else
  /// SQLite under `dataDirectory`.
  public static func open(dataDirectory: String, postgres: PostgresAddress?, logger: Logger)
    async throws -> any ServerStore
  {
    guard let postgres else { return try SQLiteStore(directory: dataDirectory, logger: logger) }
    let store = try await PostgresStore.connect(postgres, logger: logger)
    logger.notice("store: PostgreSQL", metadata: ["store": "\(postgres)", "instance": "\(store.instanceTag)"])
    return store
  }
}
