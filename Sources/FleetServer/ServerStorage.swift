import FleetCore
import FleetPostgres
import FleetStore
import Logging

/// What fleetd keeps the fleet in: the embedded SQLite file in its data directory (the default),
/// or a PostgreSQL database that several fleetd instances share (`--store postgres://…`).
public protocol ServerStorage: FleetStorage, APIKeyStorage {
  /// Releases connections; nothing is written after it.
  func close() async
}

extension SQLiteFleetStore: ServerStorage {
  public func close() async {}
}

extension PostgresFleetStore: ServerStorage {}

public enum ServerStorageOpener {
  /// PostgreSQL when `postgres` is given (any number of fleetd instances may share it), else
  /// SQLite under `dataDirectory`.
  public static func open(dataDirectory: String, postgres: PostgresAddress?, logger: Logger)
    async throws -> any ServerStorage
  {
    guard let postgres else { return try SQLiteFleetStore(directory: dataDirectory, logger: logger) }
    let store = try await PostgresFleetStore.connect(postgres, logger: logger)
    logger.notice("store: PostgreSQL", metadata: ["store": "\(postgres)", "instance": "\(store.instanceTag)"])
    return store
  }
}
