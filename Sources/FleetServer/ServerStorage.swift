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
  /// PostgreSQL when `postgres` is given, else SQLite under `dataDirectory`. `serving`: the store
  /// of a running fleetd, which must be the only one on its database.
  public static func open(dataDirectory: String, postgres: PostgresAddress?, serving: Bool = false, logger: Logger)
    async throws -> any ServerStorage
  {
    guard let postgres else { return try SQLiteFleetStore(directory: dataDirectory, logger: logger) }
    let store = try await PostgresFleetStore.connect(postgres, logger: logger)
    if serving {
      do {
        try await store.claimSoleInstance()
      } catch {
        await store.close()
        throw error
      }
    }
    logger.notice("store: PostgreSQL", metadata: ["store": "\(postgres)"])
    return store
  }
}
