/// Why no token could be had.
public struct TokenProviderError: Error, Sendable, Hashable, CustomStringConvertible {
  public enum Code: String, Sendable, Hashable {
    /// The context has no vehicle or trip ID.
    case missingContext
    /// The token server could not be reached.
    case unreachable
    /// The token server answered with an HTTP error.
    case httpStatus
    /// The answer is not JSON with the token and its expiry under the configured keys.
    case malformedResponse
  }

  public var code: Code
  public var message: String

  public init(_ code: Code, _ message: String) {
    self.code = code
    self.message = message
  }

  public var description: String { "\(code.rawValue): \(message)" }
}
