import Foundation
import Synchronization

/// A program the tests run: to completion (`run`), or in the background while a test talks to
/// it (`init`). The one way tests start processes: the `fleet` and `fleetd` binaries built with
/// them, pytest, psql.
public final class ChildProcess: @unchecked Sendable {
  // Unchecked: `process` is only started here and then signalled and read (isRunning,
  // terminationStatus), which Foundation's Process allows from any thread; the output is
  // behind a Mutex.
  public let process: Process
  let output = CollectedOutput()

  /// The repository's root.
  public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

  /// A binary of this package (`fleetd`, `fleet`): beside the test binary, else in the debug
  /// build. Test targets that run one name it as a dependency, so it is built first.
  public static func built(_ name: String) -> String {
    let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent(name)
    if FileManager.default.isExecutableFile(atPath: beside.path) { return beside.path }
    return packageRoot.appendingPathComponent(".build/debug/\(name)").path
  }

  /// Starts `executable` (a path, or a name looked up on PATH) in the background, collecting
  /// its standard output as it comes; its standard error goes to `errors` (nowhere by default).
  public init(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:], errors: FileHandle? = nil
  ) throws {
    let process = Self.process(executable, arguments, environment: environment)
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = errors ?? FileHandle.nullDevice
    self.process = process
    pipe.fileHandleForReading.readabilityHandler = { [output] handle in output.append(handle.availableData) }
    try process.run()
  }

  /// Starts the `fleet` tool.
  public static func startFleet(_ arguments: [String]) throws -> ChildProcess {
    try ChildProcess(built("fleet"), arguments)
  }

  public var text: String { output.text }
  public var lines: [String] { text.split(separator: "\n").map(String.init) }
  public var isRunning: Bool { process.isRunning }
  public var terminationStatus: Int32 { process.terminationStatus }

  /// SIGTERM: the graceful way.
  public func stop() {
    if process.isRunning { process.terminate() }
  }

  /// SIGKILL, and waits until it is gone: no shutdown, no flush.
  public func kill() {
    guard process.isRunning else { return }
    Foundation.kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }

  /// What a finished program left: its exit status, standard output and standard error.
  public struct Outcome: Sendable {
    public let status: Int32
    public let output: String
    public let errors: String
  }

  /// Runs `executable` to completion without holding a thread while it runs (a child may take
  /// minutes, and a blocked thread is one of the few the whole test process shares).
  public static func run(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:], directory: URL? = nil
  ) async throws -> Outcome {
    let process = process(executable, arguments, environment: environment)
    if let directory { process.currentDirectoryURL = directory }
    // Files rather than pipes: all of it is there once the process has exited, and a child that
    // prints more than a pipe holds cannot block on it.
    let files = (0..<2).map { _ in FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID())") }
    for file in files { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
    defer { for file in files { try? FileManager.default.removeItem(at: file) } }
    process.standardOutput = try FileHandle(forWritingTo: files[0])
    process.standardError = try FileHandle(forWritingTo: files[1])
    let status = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
      process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
      do {
        try process.run()
      } catch {
        process.terminationHandler = nil
        continuation.resume(throwing: error)
      }
    }
    return Outcome(
      status: status, output: try String(contentsOf: files[0], encoding: .utf8),
      errors: try String(contentsOf: files[1], encoding: .utf8))
  }

  /// Runs the `fleet` tool to completion.
  public static func runFleet(_ arguments: [String]) async throws -> Outcome {
    try await run(built("fleet"), arguments)
  }

  static func process(_ executable: String, _ arguments: [String], environment: [String: String]) -> Process {
    let process = Process()
    if executable.hasPrefix("/") {
      process.executableURL = URL(fileURLWithPath: executable)
      process.arguments = arguments
    } else {
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      process.arguments = [executable] + arguments
    }
    if !environment.isEmpty {
      process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    }
    return process
  }
}

/// A process's output as it arrives.
final class CollectedOutput: Sendable {
  let data = Mutex(Data())
  func append(_ more: Data) { data.withLock { $0.append(more) } }
  var text: String { data.withLock { String(decoding: $0, as: UTF8.self) } }
}
