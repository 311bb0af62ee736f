import ArgumentParser
import Foundation
import NIOCore
import NIOPosix

@main
enum Main {
  static func main() async {
    // Swift's concurrency runs on the event loops that serve the connections: a message no
    // longer moves between the pool's threads and the loop's to be read, handled and answered
    // (at 2,000 reports a second, report p99 a third of what it was). Nothing may block a task
    // for long: heavy CPU goes on a dedicated thread (`onDedicatedThread`).
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
