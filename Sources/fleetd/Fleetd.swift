import ArgumentParser
import Foundation

@main
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
