/// One server-sent event (WHATWG HTML, "Server-sent events").
public struct ServerSentEvent: Sendable, Hashable {
  /// `event:`; "message" when the server names none.
  public var name: String
  /// The `data:` lines, joined by newlines.
  public var data: String
  /// `id:`, when the server sent one.
  public var id: String?

  public init(name: String = "message", data: String, id: String? = nil) {
    self.name = name
    self.data = data
    self.id = id
  }
}

/// Splits an event stream into events as its bytes arrive, in chunks cut anywhere: lines end
/// in LF, CR or CRLF; a blank line dispatches; `:` starts a comment; an event with no data is
/// dropped, as the standard says.
public struct ServerSentEventParser: Sendable {
  var line: [UInt8] = []
  /// The last chunk ended in CR: an LF that starts the next one belongs to it.
  var afterCarriageReturn = false
  var name = ""
  var data: [String] = []
  var id: String?

  public init() {}

  /// The events that `bytes` completes.
  public mutating func feed(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
    var events: [ServerSentEvent] = []
    for byte in bytes {
      if afterCarriageReturn {
        afterCarriageReturn = false
        if byte == UInt8(ascii: "\n") { continue }
      }
      switch byte {
      case UInt8(ascii: "\r"):
        afterCarriageReturn = true
        if let event = endLine() { events.append(event) }
      case UInt8(ascii: "\n"):
        if let event = endLine() { events.append(event) }
      default:
        line.append(byte)
      }
    }
    return events
  }

  mutating func endLine() -> ServerSentEvent? {
    defer { line.removeAll(keepingCapacity: true) }
    guard !line.isEmpty else { return dispatch() }
    guard line.first != UInt8(ascii: ":") else { return nil }
    let colon = line.firstIndex(of: UInt8(ascii: ":"))
    let field = String(decoding: line[..<(colon ?? line.endIndex)], as: UTF8.self)
    var valueStart = colon.map { $0 + 1 } ?? line.endIndex
    if valueStart < line.endIndex, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
    let value = String(decoding: line[valueStart...], as: UTF8.self)
    switch field {
    case "event": name = value
    case "data": data.append(value)
    case "id" where !value.contains("\0"): id = value
    default: break  // `retry` and unknown fields: the reconnect delay is the client's own.
    }
    return nil
  }

  mutating func dispatch() -> ServerSentEvent? {
    defer {
      name = ""
      data = []
    }
    guard !data.isEmpty else { return nil }
    return ServerSentEvent(name: name.isEmpty ? "message" : name, data: data.joined(separator: "\n"), id: id)
  }
}
