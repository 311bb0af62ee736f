import ArgumentParser
import FleetServer
import Foundation

/// Where fleetd listens: the same flags, defaults and environment for `serve` and `demo`.
struct ListenOptions: ParsableArguments {
  @Option(help: "Address to listen on (env FLEETD_HOST).")
  var host = environment("FLEETD_HOST") ?? "127.0.0.1"
  @Option(help: "gRPC port; 0 picks one (env FLEETD_GRPC_PORT).")
  var grpcPort = environment("FLEETD_GRPC_PORT").flatMap(Int.init) ?? 50051
  @Option(help: "REST, web pages, /metrics and /healthz port; 0 picks one (env FLEETD_HTTP_PORT).")
  var httpPort = environment("FLEETD_HTTP_PORT").flatMap(Int.init) ?? 8080
  @Option(
    help: ArgumentHelp(
      "An origin whose pages may call fleetd from a browser, e.g. https://app.example.com; repeat for several (none by default).",
      valueName: "origin"))
  var corsOrigin: [String] = []

  func validate() throws {
    if grpcPort != 0, grpcPort == httpPort {
      throw ValidationError("--grpc-port and --http-port are both \(grpcPort): gRPC and HTTP need a port each")
    }
    for origin in corsOrigin {
      guard let url = URL(string: origin), let scheme = url.scheme, ["http", "https"].contains(scheme),
        url.host != nil, url.path.isEmpty, url.query == nil, url.fragment == nil, url.user == nil
      else {
        throw ValidationError(
          "--cors-origin '\(origin)' is not an origin: give scheme://host[:port] (http or https), with no path")
      }
    }
  }

  /// A server that could not listen, said with the flag that chose its port; any other error as
  /// it came.
  func explain(_ error: any Error) -> any Error {
    guard let failure = error as? ListenFailure else { return error }
    let (flag, port) = failure.server == .grpc ? ("--grpc-port", grpcPort) : ("--http-port", httpPort)
    return CommandFailure("\(flag) \(port) on \(host): \(failure.reason)")
  }

  func apply(to configuration: inout ServerConfiguration) {
    configuration.host = host
    configuration.grpcPort = grpcPort
    configuration.httpPort = httpPort
    configuration.corsOrigins = corsOrigin
  }
}

/// A failure printed as one line on standard error, exit status 1 (a `ValidationError` would
/// add the usage, which is not what went wrong).
struct CommandFailure: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
