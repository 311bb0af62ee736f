import Foundation
import Synchronization

/// The `fleet` tool, built before the tests that name it as a dependency, run as a process.
public final class FleetProcess: @unchecked Sendable {
  // Unchecked: `process` is only started here and then read (isRunning, terminationStatus),
  // which Foundation's Process allows from any thread; the output is behind a Mutex.
  public let process: Process
  let output = CollectedOutput()

  /// Beside the test binary, else in the package's debug build.
  public static var binary: String {
    let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("fleet")
    if FileManager.default.isExecutableFile(atPath: beside.path) { return beside.path }
    return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent(".build/debug/fleet").path
  }

  /// Starts `fleet arguments`, collecting its standard output as it comes.
  public init(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Self.binary)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    self.process = process
    pipe.fileHandleForReading.readabilityHandler = { [output] handle in output.append(handle.availableData) }
    try process.run()
  }

  public var text: String { output.text }
  public var lines: [String] { text.split(separator: "\n").map(String.init) }
  public var isRunning: Bool { process.isRunning }
  public var terminationStatus: Int32 { process.terminationStatus }

  public func stop() {
    if process.isRunning { process.terminate() }
  }

  /// Runs `fleet arguments` to completion; its exit status and standard output. Waits without
  /// holding a thread: the child may take seconds, and a blocked thread is one of the few the
  /// whole test process shares.
  public static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
    let (status, output, _) = try await runCapturingErrors(arguments)
    return (status, output)
  }

  /// The same, with its standard error as well.
  public static func runCapturingErrors(_ arguments: [String]) async throws -> (
    status: Int32, output: String, errors: String
  ) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    // A file rather than a pipe: all of it is there once the process has exited.
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID()).out")
    _ = FileManager.default.createFile(atPath: output.path, contents: nil)
    let errors = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID()).err")
    _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
    defer {
      try? FileManager.default.removeItem(at: output)
      try? FileManager.default.removeItem(at: errors)
    }
    process.standardOutput = try FileHandle(forWritingTo: output)
    process.standardError = try FileHandle(forWritingTo: errors)
    let status = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
      process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
      do {
        try process.run()
      } catch {
        process.terminationHandler = nil
        continuation.resume(throwing: error)
      }
    }
    return (status, try String(contentsOf: output, encoding: .utf8), try String(contentsOf: errors, encoding: .utf8))
  }
}

/// A process's output as it arrives.
final class CollectedOutput: Sendable {
  let data = Mutex(Data())
  func append(_ more: Data) { data.withLock { $0.append(more) } }
  var text: String { data.withLock { String(decoding: $0, as: UTF8.self) } }
}
