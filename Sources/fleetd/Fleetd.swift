import ArgumentParser
import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
  import Glibc
#endif

@main
enum Main {
  static func main() async {
    // Swift's concurrency on the event loops that serve the connections, so that a message is
    // read, handled and answered without moving between threads: at a metro's load (10,000
    // vehicles reporting, thousands of riders watching) fewer hops kept fleetd's queues short
    // where the pool's let them run to seconds (docs/benchmarks.md). Nothing may hold a task for
    // long: heavy CPU goes on a thread of its own (`onDedicatedThread`). A task that prefers
    // `globalConcurrentExecutor` still runs on Dispatch's threads (`FrameServerTransport.serve`).
    NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    keepLargeBlocksMapped()
    await Fleetd.main()
  }

  /// Blocks of a megabyte or more are mapped from the system and given back whole when freed.
  /// The routing hierarchy's metric (about 150 MB on a metro area, in arrays of 8–17 MB) is made
  /// again at every traffic customization. With glibc's default the mapping threshold rises to
  /// 32 MB as such arrays are freed, so later metrics were carved from the heaps of whichever
  /// thread made them, and the freed ones stayed resident in pieces: fleetd grew to 1.8 GB in
  /// 12 minutes of a metro's rush hour, and stays under 1 GB with this (docs/benchmarks.md).
  static func keepLargeBlocksMapped() {
    #if canImport(Glibc)
      // glibc's `mallopt` (malloc.h, which Swift's Glibc module leaves out); -3 is M_MMAP_THRESHOLD.
      typealias MallOpt = @convention(c) (Int32, Int32) -> Int32
      guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return }
      _ = unsafeBitCast(symbol, to: MallOpt.self)(-3, 1 << 20)
    #endif
  }
}

struct Fleetd: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fleetd",
    abstract: "FleetKit's server: a self-hosted, wire-compatible Fleet Engine (trips and vehicles).",
    subcommands: [
      ServeCommand.self, KeysCommand.self, APIKeysCommand.self, WebhooksCommand.self, TokenCommand.self,
      GraphCommand.self, RouteCommand.self, DemoCommand.self,
    ],
    defaultSubcommand: ServeCommand.self)
}

/// Flags may also come from the environment (FLEETD_*), for containers and service managers.
func environment(_ name: String) -> String? {
  ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
}
