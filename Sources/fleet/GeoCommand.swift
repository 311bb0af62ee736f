import ArgumentParser
import FleetCore
import FleetLocation
import Foundation

struct GeoCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "geo",
    abstract: "Coordinates: convert between WGS-84, GCJ-02 and BD-09.",
    subcommands: [ConvertCommand.self])

  struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "convert",
      abstract: "Convert LAT,LNG between coordinate systems.",
      discussion: """
        GCJ-02 differs from WGS-84 only inside the rectangle the reference implementations use for
        mainland China; BD-09 is Baidu's offset of GCJ-02. Inverses are exact (iterated), not the
        one-step approximation. Converting to WGS-84 in mainland China is regulated: check what
        your map licence allows.
        """)

    @Option(help: "wgs84, gcj02 or bd09.") var from: CoordinateSystem
    @Option(help: "wgs84, gcj02 or bd09.") var to: CoordinateSystem
    @Argument(help: "LAT,LNG") var point: String
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
      let parts = point.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
      guard parts.count == 2 else { throw ValidationError("the point must be LAT,LNG, got '\(point)'") }
      let source = LatLng(latitude: parts[0], longitude: parts[1])
      do {
        try source.validate("point")
      } catch {
        throw ValidationError(error.message)
      }
      let result = source.converted(from: from, to: to)
      let latitude = String(format: "%.8f", result.latitude)
      let longitude = String(format: "%.8f", result.longitude)
      if json {
        print("{\"system\":\"\(to.rawValue)\",\"latitude\":\(latitude),\"longitude\":\(longitude)}")
      } else {
        print("\(latitude),\(longitude)")
      }
    }
  }
}

extension CoordinateSystem: ExpressibleByArgument {}
