import FleetCore
import FleetGeometry
import FleetTestSupport
import Foundation
import Testing

/// Runs Conformance/ — Google's published Python client (google-maps-fleetengine, from PyPI)
/// against real fleetd processes — as part of `swift test`. The suite's virtualenv is created
/// under .build/ on first use.
@Suite("Conformance with Google's Python client", .serialized)
struct ConformanceSuiteTests {
  static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  /// The fleetd built next to this test binary.
  static var fleetdBinary: String {
    let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
      "fleetd")
    if FileManager.default.isExecutableFile(atPath: beside.path) { return beside.path }
    return packageRoot.appendingPathComponent(".build/debug/fleetd").path
  }

  @discardableResult
  static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (Int32, String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.currentDirectoryURL = packageRoot
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: output, as: UTF8.self))
  }

  static func python() throws -> String {
    let venv = packageRoot.appendingPathComponent(".build/conformance-venv").path
    let python = venv + "/bin/python"
    let requirements = packageRoot.appendingPathComponent("Conformance/requirements.txt").path
    let ready =
      FileManager.default.isExecutableFile(atPath: python)
      && (try? run([python, "-c", "import google.maps.fleetengine_v1, pytest"]).0) == 0
    if !ready {
      let (created, log) = try run(["python3", "-m", "venv", venv])
      guard created == 0 else { throw SetupError(log) }
      let (installed, pipLog) = try run([python, "-m", "pip", "install", "--quiet", "-r", requirements])
      guard installed == 0 else { throw SetupError(pipLog) }
    }
    return python
  }

  struct SetupError: Error, CustomStringConvertible {
    let description: String
    init(_ log: String) { description = "could not set up the conformance virtualenv:\n\(log)" }
  }

  @Test(.timeLimit(.minutes(10)))
  func googlesClientPassesTheConformanceSuite() async throws {
    try await passesTheSuite(environment: [:])
  }

  /// The same suite with every fleetd on PostgreSQL (a database each in the tests' own cluster).
  @Test(.timeLimit(.minutes(10)))
  func googlesClientPassesTheConformanceSuiteOnPostgreSQL() async throws {
    let cluster = try await PostgresCluster.start()
    try await passesTheSuite(environment: ["CONFORMANCE_POSTGRES": cluster.url(database: "postgres")])
  }

  /// Two fleetd processes on one PostgreSQL database: the whole suite with calls shared out in
  /// turn, then the faults (an instance killed, the listening connections killed, PostgreSQL
  /// restarted) and what several instances share (changes, quotas, keys, the dispatcher). The
  /// cluster is this test's own, since it is restarted.
  @Test(.timeLimit(.minutes(15)))
  func twoInstancesOnOnePostgreSQLPassTheSuiteAndSurviveFaults() async throws {
    let cluster = try await PostgresCluster.startPrivate()
    let environment = [
      "CONFORMANCE_POSTGRES": cluster.url(database: "postgres"), "CONFORMANCE_INSTANCES": "2",
      "CONFORMANCE_PG_RESTART": cluster.restartCommand,
    ]
    try await passesTheSuite(
      environment: environment, files: ["Conformance/test_conformance.py", "Conformance/test_instances.py"])
  }

  /// Runs pytest on a thread of its own: it takes minutes, and blocking one of the tests'
  /// cooperative threads that long (two on this machine) starves every other test.
  func passesTheSuite(
    environment: [String: String], files: [String] = ["Conformance/test_conformance.py"]
  ) async throws {
    let (status, output) = try await onDedicatedThread(named: "conformance suite") {
      try Self.run(
        [try Self.python(), "-m", "pytest", "-q", "-p", "no:cacheprovider"] + files,
        environment: environment.merging(["FLEETD_BINARY": Self.fleetdBinary]) { $1 })
    }
    print(output)
    #expect(status == 0, "conformance suite failed:\n\(output)")
    #expect(output.contains(" passed"))
    #expect(!output.contains(" failed"))
  }
}
