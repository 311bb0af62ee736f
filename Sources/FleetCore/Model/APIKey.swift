import Foundation

/// An app's key for fleetd's geo endpoints (`/fleetkit/v1/geo:reverse`, `/fleetkit/v1/places:search`). Only the
/// SHA-256 of the secret is stored; the secret is shown once, when the key is made.
public struct APIKeyRecord: Sendable, Hashable, Codable {
  /// Public and short, for listing and revoking: the key's first characters after its prefix.
  public var id: String
  /// Who the key is for.
  public var app: String
  /// Hex SHA-256 of the whole key.
  public var secretHash: String
  /// Requests per minute (a token bucket with a burst of one minute's worth).
  public var perMinute: Int
  /// Requests per UTC day.
  public var perDay: Int
  public var createTime: Date
  public var revokeTime: Date?

  public init(
    id: String, app: String, secretHash: String, perMinute: Int, perDay: Int, createTime: Date,
    revokeTime: Date? = nil
  ) {
    self.id = id
    self.app = app
    self.secretHash = secretHash
    self.perMinute = perMinute
    self.perDay = perDay
    self.createTime = createTime
    self.revokeTime = revokeTime
  }

  public static let defaultPerMinute = 600
  public static let defaultPerDay = 100_000
}
