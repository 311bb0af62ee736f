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
  /// The suite's Python, with its requirements: created under .build/ on first use, once per
  /// test process (suites running at the same time share it).
  static func python() async throws -> String { try await venv.value }

  static let venv = Task<String, any Error> {
    let venv = ChildProcess.packageRoot.appendingPathComponent(".build/conformance-venv").path
    let python = venv + "/bin/python"
    let requirements = ChildProcess.packageRoot.appendingPathComponent("Conformance/requirements.txt").path
    var ready = FileManager.default.isExecutableFile(atPath: python)
    if ready {
      let imports = try? await ChildProcess.run(
        python,
        [
          "-c",
          "import google.maps.fleetengine_v1, google.maps.fleetengine_delivery_v1, pytest, cryptography, standardwebhooks",
        ])
      ready = imports?.status == 0
    }
    if !ready {
      let created = try await ChildProcess.run("python3", ["-m", "venv", venv])
      guard created.status == 0 else { throw SetupError(created.output + created.errors) }
      var installed = try await ChildProcess.run(python, ["-m", "pip", "install", "--quiet", "-r", requirements])
      // A download that came out wrong (a wheel whose hash does not match, seen once on a fresh
      // clone and not on the next download) is tried again past pip's cache before giving up.
      for _ in 0..<2 where installed.status != 0 {
        installed = try await ChildProcess.run(
          python, ["-m", "pip", "install", "--quiet", "--no-cache-dir", "-r", requirements])
      }
      guard installed.status == 0 else { throw SetupError(installed.output + installed.errors) }
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
      environment: environment,
      files: ["Conformance/test_conformance.py", "Conformance/test_instances.py", "Conformance/test_deliveries.py"])
  }

  func passesTheSuite(
    environment: [String: String],
    files: [String] = [
      "Conformance/test_conformance.py", "Conformance/test_key_files.py", "Conformance/test_deliveries.py",
    ]
  ) async throws {
    try await Self.runPytest(environment: environment, files: files)
  }

  /// pytest on `files`; `-s` shows what the tests print (their figures).
  static func runPytest(environment: [String: String], files: [String], showOutput: Bool = false) async throws {
    let outcome = try await ChildProcess.run(
      try await Self.python(), ["-m", "pytest", "-q", "-p", "no:cacheprovider"] + (showOutput ? ["-s"] : []) + files,
      environment: environment.merging(["FLEETD_BINARY": ChildProcess.built("fleetd")]) { $1 },
      directory: ChildProcess.packageRoot)
    let (status, output) = (outcome.status, outcome.output + outcome.errors)
    print(output)
    #expect(status == 0, "conformance suite failed:\n\(output)")
    #expect(output.contains(" passed"))
    #expect(!output.contains(" failed"))
  }
}

/// Conformance/test_webhooks.py: webhooks under an outage and a SIGKILL, verified with the
/// Standard Webhooks library from PyPI, on SQLite and on PostgreSQL with two instances. Five
/// minutes each, so the two run side by side, and beside the other suites.
@Suite("Webhooks under faults")
struct WebhookFaultTests {
  @Test(.timeLimit(.minutes(12)))
  func everyEventArrivesInOrderThroughAnOutageAndAKill9() async throws {
    try await ConformanceSuiteTests.runPytest(
      environment: [:], files: ["Conformance/test_webhooks.py"], showOutput: true)
  }

  @Test(.timeLimit(.minutes(12)))
  func theSameWithTwoInstancesOnPostgreSQL() async throws {
    let cluster = try await PostgresCluster.start()
    try await ConformanceSuiteTests.runPytest(
      environment: ["CONFORMANCE_POSTGRES": cluster.url(database: "postgres"), "CONFORMANCE_INSTANCES": "2"],
      files: ["Conformance/test_webhooks.py"], showOutput: true)
  }
}
