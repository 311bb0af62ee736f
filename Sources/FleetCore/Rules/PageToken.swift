import Foundation

/// An opaque, stable page token: the last ID returned plus a fingerprint of the query, so a token
/// cannot be replayed against a different query.
struct PageToken: Codable {
  var after: String
  var query: String

  static func decode(_ token: String, query: String) throws(FleetError) -> String? {
    guard !token.isEmpty else { return nil }
    var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    guard let data = Data(base64Encoded: base64), let decoded = try? JSONDecoder().decode(PageToken.self, from: data)
    else { throw .invalid("page_token is not a token this server issued") }
    guard decoded.query == query else { throw .invalid("page_token was issued for a different query") }
    return decoded.after
  }

  static func encode(after: String, query: String) -> String {
    let data = (try? JSONEncoder().encode(PageToken(after: after, query: query))) ?? Data()
    return data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
      .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
  }

  /// One page of `sorted` (in ID order): the items after the token's ID, at most `size`, and
  /// the token of the next page (empty on the last).
  static func page<T>(_ sorted: [T], id: (T) -> String, size: Int, after: String?, query: String) -> (
    page: ArraySlice<T>, next: String
  ) {
    let remaining = sorted.drop { item in after.map { id(item) <= $0 } ?? false }
    let page = remaining.prefix(size)
    return (page, remaining.count > size ? encode(after: id(page.last!), query: query) : "")
  }

  /// Fleet Engine leaves the default page size to the server; 100 by default, at most 1000.
  static func pageSize(_ requested: Int32) throws(FleetError) -> Int {
    guard requested >= 0 else { throw .invalid("page_size must not be negative, got \(requested)") }
    return requested == 0 ? 100 : min(Int(requested), 1000)
  }
}
