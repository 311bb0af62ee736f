import FleetCore
import Foundation
import Testing

@testable import FleetAuth

@Suite("Token verification")
struct TokenVerifierTests {
  @Test func parsesTheBearerScheme() {
    #expect(TokenVerifier.bearerToken("Bearer abc.def.ghi") == "abc.def.ghi")
    #expect(TokenVerifier.bearerToken("bearer   abc ") == "abc")
    #expect(TokenVerifier.bearerToken("BEARER x") == "x")
    #expect(TokenVerifier.bearerToken("Basic abc") == nil)
    #expect(TokenVerifier.bearerToken("Bearer") == nil)
    #expect(TokenVerifier.bearerToken("Bearer    ") == nil)
    #expect(TokenVerifier.bearerToken("Bearerabc") == nil)
  }

  @Test func cachedTokensStillExpireAndFollowRevocation() async throws {
    let now = Date()
    let (file, key) = try ServiceAccountKey.generate(provider: "p", role: .consumer, now: now)
    let signer = try TokenSigner(key: file)
    final class Clock: @unchecked Sendable {  // mutated only between awaits of this test
      var now: Date
      init(_ now: Date) { self.now = now }
    }
    final class Keys: @unchecked Sendable {  // likewise
      var key: SigningKey
      init(_ key: SigningKey) { self.key = key }
    }
    let clock = Clock(now)
    let keys = Keys(key)
    let verifier = TokenVerifier(configuration: AuthConfiguration(), clock: { clock.now }) { id in
      id == keys.key.keyID ? keys.key : nil
    }
    let token = try signer.token(tripID: "t", lifetime: 60, now: now)
    #expect(try await verifier.verify(token: token).tripID == "t")
    #expect(try await verifier.verify(token: token).role == .consumer)  // from the cache
    keys.key.revokeTime = now
    clock.now = now.addingTimeInterval(6)  // past the key cache's 5 s
    await #expect(throws: FleetError.self) { try await verifier.verify(token: token) }
    keys.key.revokeTime = nil
    clock.now = now.addingTimeInterval(61)  // past the token's own expiry
    await #expect(throws: FleetError.self) { try await verifier.verify(token: token) }
  }
}
