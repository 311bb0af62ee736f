import ArgumentParser
import NIOCore
import NIOPosix

@main
enum Main {
  static func main() async {
    // As in fleetd: Swift's concurrency on the event loops, so that the thousands of simulated
    // drivers' messages do not move between threads to be handled.
    NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    await FleetTool.main()
  }
}

struct FleetTool: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fleet",
    abstract: "FleetKit's client-side tools.",
    subcommands: [
      DriveCommand.self, SimulateCommand.self, RideCommand.self, TrackCommand.self, RideStatusCommand.self,
      GeoCommand.self,
    ])
}
