import FleetCore
import FleetGeometry
import Foundation
import Synchronization

/// A throwaway PostgreSQL cluster for the tests: `initdb` in a temporary directory (as the
/// `postgres` user when the tests run as root, which initdb refuses), its own port on loopback,
/// never a system cluster. One per test process, started on first use; a watchdog stops it and
/// removes its files when the test process ends, however it ends.
public final class PostgresCluster: Sendable {
  public let directory: String
  public let port: Int
  let binaries: String
  let user = "fleet"
  let databases = Mutex(0)

  static let shared = Mutex<Task<PostgresCluster, any Error>?>(nil)

  /// The process's cluster.
  public static func start() async throws -> PostgresCluster {
    let task = shared.withLock { task in
      if let task { return task }
      let started = Task { try await PostgresCluster.create() }
      task = started
      return started
    }
    return try await task.value
  }

  /// A cluster of the caller's own, for tests that break its connections or restart it under
  /// the others' feet.
  public static func startPrivate() async throws -> PostgresCluster { try await create() }

  /// A shell command that restarts the server at once, as a crash would (`pg_ctl restart -m
  /// immediate`: no checkpoint, recovery from the WAL at start).
  public var restartCommand: String {
    "\(ownerPrefix)\(binaries)/pg_ctl -D \(dataDirectory) -l \(logFile) -m immediate -w restart >/dev/null"
  }

  init(directory: String, port: Int, binaries: String) {
    self.directory = directory
    self.port = port
    self.binaries = binaries
  }

  static func create() async throws -> PostgresCluster {
    guard let binaries = installedBinaries() else {
      throw ClusterError("PostgreSQL is not installed: sudo apt-get install postgresql")
    }
    let directory = NSTemporaryDirectory() + "fleetkit-postgres-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let cluster = PostgresCluster(directory: directory, port: try freePort(), binaries: binaries)
    if getuid() == 0 { try await run("/bin/chown", ["-R", "postgres:postgres", directory]) }
    try await cluster.asOwner(
      "\(binaries)/initdb", ["-D", cluster.dataDirectory, "-U", cluster.user, "-A", "trust", "--no-sync", "-E", "UTF8"])
    try cluster.watch()
    try await cluster.startServer()
    return cluster
  }

  var dataDirectory: String { directory + "/data" }

  /// A new, empty database in the cluster, as a `--store` URL.
  public func newDatabase() async throws -> String {
    let name = databases.withLock { n in
      n += 1
      return "fleet_\(getpid())_\(n)"
    }
    try await psql("CREATE DATABASE \(name)")
    return url(database: name)
  }

  public func url(database: String) -> String { "postgres://\(user)@127.0.0.1:\(port)/\(database)?sslmode=disable" }

  /// Runs SQL as the cluster's superuser; returns what psql printed (unaligned, tuples only).
  @discardableResult
  public func psql(_ sql: String, database: String = "postgres") async throws -> String {
    let arguments = [
      "-h", "127.0.0.1", "-p", "\(port)", "-U", user, "-d", database, "-v", "ON_ERROR_STOP=1", "-Atc", sql,
    ]
    return try await Self.run("\(binaries)/psql", arguments)
  }

  var logFile: String { directory + "/server.log" }

  var serverOptions: String { "-p \(port) -k \(directory) -c listen_addresses=127.0.0.1 -c max_connections=200" }

  /// pg_ctl's server outlives it and keeps its output descriptors: started detached, and waited
  /// for on a thread of its own (waitpid blocks).
  func startServer() async throws {
    let tool = "\(binaries)/pg_ctl"
    let arguments = ["-D", dataDirectory, "-l", logFile, "-w", "start", "-o", serverOptions]
    let (command, rest) =
      getuid() == 0 ? ("/usr/sbin/runuser", ["-u", "postgres", "--", tool] + arguments) : (tool, arguments)
    try await onDedicatedThread(named: "pg_ctl") { try Self.spawnDetached(command, rest) }
  }

  /// Stops the server and removes the cluster once this process is gone.
  func watch() throws {
    let script = """
      while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
      \(ownerPrefix)\(binaries)/pg_ctl -D \(dataDirectory) -m immediate stop >/dev/null 2>&1
      rm -rf \(directory)
      """
    _ = try ChildProcess("/bin/sh", ["-c", script])
  }

  var ownerPrefix: String { getuid() == 0 ? "/usr/sbin/runuser -u postgres -- " : "" }

  func asOwner(_ tool: String, _ arguments: [String]) async throws {
    if getuid() == 0 {
      try await Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", tool] + arguments)
    } else {
      try await Self.run(tool, arguments)
    }
  }

  /// The newest installed server's binaries (Debian: /usr/lib/postgresql/N/bin).
  static func installedBinaries() -> String? {
    let root = "/usr/lib/postgresql"
    let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
    return versions.compactMap(Int.init).sorted().reversed().map { "\(root)/\($0)/bin" }
      .first { FileManager.default.fileExists(atPath: $0 + "/initdb") }
  }

  @discardableResult
  static func run(_ tool: String, _ arguments: [String]) async throws -> String {
    let outcome = try await ChildProcess.run(tool, arguments, directory: URL(fileURLWithPath: "/tmp"))
    guard outcome.status == 0 else {
      throw ClusterError("\(tool) \(arguments.joined(separator: " ")) failed: \(outcome.errors + outcome.output)")
    }
    return outcome.output.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// Runs a tool whose children outlive it (pg_ctl starting the server) and waits for the tool
  /// alone: Foundation's Process would wait for every process holding its exit monitor.
  static func spawnDetached(_ tool: String, _ arguments: [String]) throws {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] {
      posix_spawn_file_actions_addopen(
        &actions, descriptor, "/dev/null", descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0)
    }
    // Nothing else of this process may reach the server: an inherited socket of another test
    // would keep that test's connection open after it closed it. bash closes every descriptor
    // above 2, then becomes the tool.
    let closeAll =
      "for fd in $(ls /proc/$$/fd); do [ $fd -gt 2 ] && eval \"exec $fd>&-\"; done 2>/dev/null; exec \"$@\""
    let argv = (["/bin/bash", "-c", closeAll, "bash", tool] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, "/bin/bash", &actions, nil, argv, environ)
    guard spawned == 0 else { throw ClusterError("\(tool) could not start: \(String(cString: strerror(spawned)))") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    guard status == 0 else {
      throw ClusterError("\(tool) \(arguments.joined(separator: " ")) failed with status \(status)")
    }
  }

  public static func freePort() throws -> Int {
    try ListeningSocket().port
  }
}

public struct ClusterError: Error, CustomStringConvertible {
  public let description: String
  init(_ description: String) { self.description = description }
}
