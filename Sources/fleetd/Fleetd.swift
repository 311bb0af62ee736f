import ArgumentParser
import Foundation
import NIOCore
import NIOPosix

@main
enum Main {
  static func main() async {
    // Swift's concurrency on the event loops that serve the connections, so that a message is
    // read, handled and answered without moving between threads: at a metro's load (10,000
    // vehicles reporting, thousands of riders watching) fewer hops kept fleetd's queues short
    // where the pool's let them run to seconds (docs/benchmarks.md). Nothing may hold a task for
    // long: heavy CPU goes on a thread of its own (`onDedicatedThread`).
    NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    await Fleetd.main()
  }
}

struct Fleetd: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fleetd",
    abstract: "FleetKit's server: a self-hosted, wire-compatible Fleet Engine (trips and vehicles).",
    subcommands: [
      ServeCommand.self, KeysCommand.self, APIKeysCommand.self, WebhooksCommand.self, TokenCommand.self,
      GraphCommand.self, RouteCommand.self, DemoCommand.self,
    ],
    defaultSubcommand: ServeCommand.self)
}

/// Flags may also come from the environment (FLEETD_*), for containers and service managers.
func environment(_ name: String) -> String? {
  ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
}
