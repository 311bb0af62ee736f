import ArgumentParser
import FleetClient
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// fleetd's address, named the same way in every `fleet` command and as `fleetd serve` names
/// what it listens on: a host, its gRPC port and its HTTP port. Each command talks to the port
/// its protocol needs; given the other kind by mistake, it says so.
struct ServerAddress: ParsableArguments {
  @Option(help: "fleetd's host (env FLEET_HOST; default 127.0.0.1).") var host: String?
  @Option(help: "fleetd's gRPC port (env FLEET_GRPC_PORT; default 50051).") var grpcPort: Int?
  @Option(help: "fleetd's HTTP port: REST, OSRM, geo (env FLEET_HTTP_PORT; default 8080).") var httpPort: Int?
  @Flag(help: "Connect with TLS.") var tls = false

  static let environment = ProcessInfo.processInfo.environment

  var resolvedHost: String { host ?? Self.environment["FLEET_HOST"] ?? "127.0.0.1" }
  var resolvedGRPCPort: Int { grpcPort ?? Self.environment["FLEET_GRPC_PORT"].flatMap { Int($0) } ?? 50051 }
  var resolvedHTTPPort: Int { httpPort ?? Self.environment["FLEET_HTTP_PORT"].flatMap { Int($0) } ?? 8080 }

  var grpcEndpoint: FleetEndpoint { FleetEndpoint(host: resolvedHost, port: resolvedGRPCPort, usesTLS: tls) }
  var httpURL: URL { URL(string: "\(tls ? "https" : "http")://\(resolvedHost):\(resolvedHTTPPort)")! }

  func validate() throws {
    for (name, variable, value) in [
      ("--grpc-port", "FLEET_GRPC_PORT", grpcPort), ("--http-port", "FLEET_HTTP_PORT", httpPort),
    ] {
      if let value, !(1...65535).contains(value) { throw ValidationError("\(name) must be a port, 1-65535") }
      if value == nil, let text = Self.environment[variable], Int(text).map({ (1...65535).contains($0) }) != true {
        throw ValidationError("\(variable) must be a port, 1-65535, not '\(text)'")
      }
    }
    guard !resolvedHost.isEmpty, !resolvedHost.contains("/"), !resolvedHost.contains(":") else {
      throw ValidationError("--host is a host name or address, without a scheme or port, not '\(resolvedHost)'")
    }
  }

  enum PortKind { case grpc, http }

  /// Fails with a clear message when the port the command talks to answers as the other kind
  /// of fleetd port (fleetd's gRPC port speaks HTTP/2 only; its HTTP port answers HTTP/1.1).
  /// Says nothing when nothing answers: commands that wait for fleetd keep waiting.
  func checkPort(for expected: PortKind) throws {
    guard !tls else { return }
    let port = expected == .grpc ? resolvedGRPCPort : resolvedHTTPPort
    guard let answer = Self.probe(host: resolvedHost, port: port) else { return }
    let speaksHTTP1 = answer.starts(with: Array("HTTP/1.".utf8))
    switch (expected, speaksHTTP1) {
    case (.grpc, true):
      throw ToolFailure(
        "\(resolvedHost):\(port) answers HTTP/1.1: that is fleetd's HTTP port; this command talks gRPC: give fleetd's gRPC port with --grpc-port (default 50051)"
      )
    case (.http, false):
      throw ToolFailure(
        "\(resolvedHost):\(port) does not answer HTTP/1.1 (fleetd's gRPC port speaks only HTTP/2): give fleetd's HTTP port with --http-port (default 8080)"
      )
    default: return
    }
  }

  /// The first bytes a port answers to `GET /healthz` over HTTP/1.1, or nil when it cannot be
  /// reached or says nothing within 5 s.
  static func probe(host: String, port: Int) -> [UInt8]? {
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var found: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, String(port), &hints, &found) == 0, let info = found else { return nil }
    defer { freeaddrinfo(found) }
    let socket = Glibc.socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
    guard socket >= 0 else { return nil }
    defer { close(socket) }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    guard connect(socket, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else { return nil }
    let request = Array("GET /healthz HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n".utf8)
    guard send(socket, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return nil }
    var buffer = [UInt8](repeating: 0, count: 16)
    let n = recv(socket, &buffer, buffer.count, 0)
    // No answer within 5 s (a very busy server) tells nothing about the port: the command goes on.
    return n > 0 ? Array(buffer[..<n]) : nil
  }
}
