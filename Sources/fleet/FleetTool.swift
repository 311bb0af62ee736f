import ArgumentParser

@main
struct FleetTool: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fleet",
    abstract: "FleetKit's client-side tools.",
    subcommands: [
      DriveCommand.self, SimulateCommand.self, RideCommand.self, TrackCommand.self, RideStatusCommand.self, GeoCommand.self])
}
