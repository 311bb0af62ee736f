import Foundation

/// One durable change. Every stored entity carries a revision that only grows, so a store may
/// apply changes from concurrent commits in any order: a write with an older revision than the
/// stored one is ignored, and a delete only removes rows older than itself.
public enum StoredChange: Sendable, Hashable {
  case putTrip(Trip)
  case deleteTrip(provider: String, id: String, revision: UInt64)
  case putVehicle(Vehicle)
  case deleteVehicle(provider: String, id: String, revision: UInt64)
  case putBillableTrip(BillableTripReport)
  /// A booked ride (the dispatcher's record; its trip is stored as a trip).
  case putRide(Ride)
}

/// A ReportBillableTrip call, kept for billing.
public struct BillableTripReport: Sendable, Hashable, Codable {
  public var provider: String
  public var billableTripID: String
  public var countryCode: String
  public var platform: Int
  public var relatedIDs: [String]
  public var solutionType: Int
  public var reportTime: Date

  public init(
    provider: String, billableTripID: String, countryCode: String, platform: Int, relatedIDs: [String],
    solutionType: Int, reportTime: Date
  ) {
    self.provider = provider
    self.billableTripID = billableTripID
    self.countryCode = countryCode
    self.platform = platform
    self.relatedIDs = relatedIDs
    self.solutionType = solutionType
    self.reportTime = reportTime
  }
}

/// A registered public key that verifies tokens (its private half stays with the client).
public struct SigningKey: Sendable, Hashable, Codable {
  public var keyID: String
  public var provider: String
  public var role: Role
  /// The RSA public key, PEM.
  public var publicKeyPEM: String
  /// The service-account e-mail tokens are issued by (`iss`/`sub`).
  public var clientEmail: String
  public var createTime: Date
  public var revokeTime: Date?

  public init(
    keyID: String, provider: String, role: Role, publicKeyPEM: String, clientEmail: String, createTime: Date,
    revokeTime: Date? = nil
  ) {
    self.keyID = keyID
    self.provider = provider
    self.role = role
    self.publicKeyPEM = publicKeyPEM
    self.clientEmail = clientEmail
    self.createTime = createTime
    self.revokeTime = revokeTime
  }
}

/// The storage port of the domain. `commit` returns only once the changes are durable.
/// A store used by one instance may ignore a commit's expected revisions and progress: its
/// memory is the only writer.
public protocol FleetStorage: Sendable {
  func loadTrips() async throws -> [Trip]
  func loadVehicles() async throws -> [Vehicle]
  func loadRides() async throws -> [Ride]
  /// The highest revision ever stored (trips, vehicles, rides), deletions (tombstones) included, so that new revisions
  /// always sort after everything on disk.
  func highestRevision() async throws -> UInt64
  func commit(_ commit: FleetCommit) async throws
  func signingKey(id: String) async throws -> SigningKey?
  func signingKeys() async throws -> [SigningKey]
  func saveSigningKey(_ key: SigningKey) async throws
}

extension FleetStorage {
  /// Commits changes that nothing else could have written concurrently.
  public func commit(_ changes: [StoredChange]) async throws { try await commit(FleetCommit(changes: changes)) }
}
