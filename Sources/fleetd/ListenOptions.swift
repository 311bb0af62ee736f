import ArgumentParser
import FleetServer

/// Where fleetd listens: the same flags, defaults and environment for `serve` and `demo`.
struct ListenOptions: ParsableArguments {
  @Option(help: "Address to listen on (env FLEETD_HOST).")
  var host = environment("FLEETD_HOST") ?? "127.0.0.1"
  @Option(help: "gRPC port; 0 picks one (env FLEETD_GRPC_PORT).")
  var grpcPort = environment("FLEETD_GRPC_PORT").flatMap(Int.init) ?? 50051
  @Option(help: "REST, web pages, /metrics and /healthz port; 0 picks one (env FLEETD_HTTP_PORT).")
  var httpPort = environment("FLEETD_HTTP_PORT").flatMap(Int.init) ?? 8080

  func apply(to configuration: inout ServerConfiguration) {
    configuration.host = host
    configuration.grpcPort = grpcPort
    configuration.httpPort = httpPort
  }
}
