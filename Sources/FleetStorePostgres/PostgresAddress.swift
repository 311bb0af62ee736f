import FleetCore
import Foundation
import NIOSSL
import PostgresNIO

/// A PostgreSQL address in libpq's URI form: `postgres://user[:password]@host[:port]/database`,
/// with `?sslmode=disable|prefer|require` (default prefer) and `?host=/run/postgresql` for a Unix
/// socket directory, as `psql` takes it.
public struct PostgresAddress: Sendable, Hashable, CustomStringConvertible {
  public var host: String
  public var port: Int
  /// A Unix socket directory (`?host=/dir`), used instead of TCP when set.
  public var socketDirectory: String?
  public var user: String
  public var password: String?
  public var database: String
  public var sslMode: SSLMode

  public enum SSLMode: String, Sendable, Hashable {
    case disable, prefer, require
  }

  /// Whether `text` names a PostgreSQL store rather than a directory.
  public static func isPostgresURL(_ text: String) -> Bool {
    text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
  }

  public init(_ text: String) throws(FleetError) {
    guard Self.isPostgresURL(text), let url = URLComponents(string: text) else {
      throw .invalid("--store must be postgres://user@host:port/database, got '\(text)'")
    }
    var socketDirectory: String?
    var sslMode = SSLMode.prefer
    for item in url.queryItems ?? [] {
      switch (item.name, item.value ?? "") {
      case ("host", let value) where value.hasPrefix("/"): socketDirectory = value
      case ("sslmode", let value):
        guard let mode = SSLMode(rawValue: value) else {
          throw .invalid("--store: sslmode must be disable, prefer or require, got '\(value)'")
        }
        sslMode = mode
      case (let name, _): throw .invalid("--store: unknown parameter '\(name)' (known: sslmode, host)")
      }
    }
    let database = String(url.path.drop { $0 == "/" })
    guard !database.isEmpty, !database.contains("/") else {
      throw .invalid("--store: the URL must name a database, as in postgres://user@localhost:5432/fleet")
    }
    let user = url.user ?? ProcessInfo.processInfo.environment["USER"] ?? ""
    guard !user.isEmpty else { throw .invalid("--store: the URL must name a user, as in postgres://fleet@host/db") }
    guard socketDirectory != nil || !(url.host ?? "").isEmpty else {
      throw .invalid("--store: the URL must name a host, or a socket directory with ?host=/run/postgresql")
    }
    let port = url.port ?? 5432
    guard (1...65535).contains(port) else { throw .invalid("--store: port must be in 1...65535, got \(port)") }
    self.host = url.host ?? ""
    self.port = port
    self.socketDirectory = socketDirectory
    self.user = user.removingPercentEncoding ?? user
    self.password = url.password?.removingPercentEncoding
    self.database = database.removingPercentEncoding ?? database
    self.sslMode = sslMode
  }

  /// The address without its password, for logs.
  public var description: String {
    let place = socketDirectory.map { "?host=\($0)" } ?? ""
    let host = socketDirectory == nil ? "\(self.host):\(port)" : ""
    return "postgres://\(user)@\(host)/\(database)\(place)"
  }

  var clientConfiguration: PostgresClient.Configuration {
    if let socketDirectory {
      return PostgresClient.Configuration(
        unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: user, password: password, database: database)
    }
    let tls: PostgresClient.Configuration.TLS =
      switch sslMode {
      case .disable: .disable
      case .prefer: .prefer(.makeClientConfiguration())
      case .require: .require(.makeClientConfiguration())
      }
    return PostgresClient.Configuration(
      host: host, port: port, username: user, password: password, database: database, tls: tls)
  }
}
