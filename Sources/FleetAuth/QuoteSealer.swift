import Crypto
import FleetCore
import Foundation

/// Seals quote terms into quote IDs: `q1.` + base64url(terms ‖ HMAC-SHA256(terms)[0..<16]),
/// under a 256-bit secret kept in the store (`SecretStore`), so that every instance honours
/// every quote and nobody can alter a price. 128 bits of tag are far beyond guessing within a
/// quote's lifetime.
public struct QuoteSealer: QuoteSealing {
  static let prefix = "q1."
  static let tagBytes = 16
  /// The store's name for the secret.
  public static let secretName = "quote-sealing-key"

  /// Kept as bytes: Crypto's `SymmetricKey` is not `Sendable`; one is made per seal.
  let secret: [UInt8]

  public init(secret: [UInt8]) { self.secret = secret }

  /// The sealer over the store's secret, made on first use.
  public static func load(from store: any SecretStore) async throws -> QuoteSealer {
    QuoteSealer(secret: try await store.secret(named: secretName) { randomSecret() })
  }

  /// 32 random bytes from the system's generator.
  public static func randomSecret() -> [UInt8] {
    SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
  }

  public func seal(_ terms: [UInt8]) -> String {
    Self.prefix + Base64URL.encode(Data(terms + tag(terms)))
  }

  public func open(_ id: String) -> [UInt8]? {
    guard id.hasPrefix(Self.prefix), let data = Base64URL.decode(id.dropFirst(Self.prefix.count)),
      data.count > Self.tagBytes
    else { return nil }
    let bytes = [UInt8](data)
    let terms = Array(bytes.dropLast(Self.tagBytes))
    // Compared in constant time, so that timing tells nothing about a forged tag.
    let expected = tag(terms)
    let given = bytes.suffix(Self.tagBytes)
    guard zip(expected, given).reduce(UInt8(0), { $0 | ($1.0 ^ $1.1) }) == 0 else { return nil }
    return terms
  }

  func tag(_ terms: [UInt8]) -> [UInt8] {
    Array(HMAC<SHA256>.authenticationCode(for: terms, using: SymmetricKey(data: secret))).prefix(Self.tagBytes).map {
      $0
    }
  }
}
