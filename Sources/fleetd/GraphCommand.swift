import ArgumentParser
import FleetRouting
import Foundation

struct GraphCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "graph", abstract: "Prepare road graphs for routing.", subcommands: [Build.self])

  struct Build: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "build", abstract: "Build a graph file from an OpenStreetMap .osm.pbf extract (car profile).")

    @Option(help: "OpenStreetMap PBF extract to read.")
    var osm: String
    @Option(help: "Graph file to write.")
    var out: String

    func run() throws {
      let clock = ContinuousClock()
      let started = clock.now
      let (network, summary) = try OSMExtractor().extract(path: osm)
      try GraphFile.write(network, profile: CarProfile(), to: out)
      let size = (try? FileManager.default.attributesOfItem(atPath: out)[.size] as? Int) ?? 0
      print(
        """
        \(out): \(network.junctions.count) junctions, \(network.edges.count) road edges from \(summary.drivableWays) ways, \
        \(summary.restrictions) turn restrictions (\(summary.unsupportedRestrictions) with via ways skipped), \
        \(size / 1024) KiB, built in \(clock.now - started)
        """)
    }
  }
}
