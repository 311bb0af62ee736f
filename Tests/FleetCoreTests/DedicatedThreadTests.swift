import FleetGeometry
import Foundation
import Testing

@Suite("Work on a dedicated thread")
struct DedicatedThreadTests {
  struct Refused: Error, Equatable { let reason: String }

  /// The calling thread's name as the system has it (what perf, top and debuggers show).
  static func systemThreadName() -> String? {
    #if os(Linux)
      (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
        .trimmingCharacters(in: .whitespacesAndNewlines)
    #else
      Thread.current.name
    #endif
  }

  @Test func theWorkRunsOnAThreadOfItsOwnAndItsResultComesBack() async {
    let (name, value) = await onDedicatedThread(named: "dispatch round") { (Self.systemThreadName(), 6 * 7) }
    #expect(name == "dispatch round")
    #expect(value == 42)
  }

  @Test func theWorksOwnErrorComesBackAsItsType() async {
    do throws(Refused) {
      _ = try await onDedicatedThread(named: "refusing") { () throws(Refused) -> Int in
        throw Refused(reason: "no road")
      }
      Issue.record("the work's error was not thrown")
    } catch {
      #expect(error == Refused(reason: "no road"))
    }
  }
}
