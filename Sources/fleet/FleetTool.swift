import ArgumentParser
import NIOCore
import NIOPosix

@main
enum Main {
  static func main() async {
    // Swift's concurrency on the event loops that carry the gRPC connections, as in fleetd: a
    // simulated city's thousands of report streams and watchers are answered where they are
    // read, not handed to another thread and back (docs/benchmarks.md).
    NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    await FleetTool.main()
  }
}

struct FleetTool: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fleet",
    abstract: "FleetKit's client-side tools.",
    subcommands: [
      DriveCommand.self, DeliverCommand.self, SimulateCommand.self, RideCommand.self, TrackCommand.self,
      RideStatusCommand.self,
      GeoCommand.self,
    ])
}
