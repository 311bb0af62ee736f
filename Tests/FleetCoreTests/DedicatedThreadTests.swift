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

  /// Many at once, so that some threads run before their creator has finished starting them:
  /// each still carries its own name (Foundation alone named only the threads that started
  /// late).
  @Test func threadsStartedTogetherEachCarryTheirName() async {
    let names = await withTaskGroup(of: (String, String?).self) { group in
      for i in 0..<64 {
        group.addTask { await onDedicatedThread(named: "worker \(i)") { ("worker \(i)", Self.systemThreadName()) } }
      }
      return await group.reduce(into: []) { $0.append($1) }
    }
    #expect(names.count == 64)
    for (expected, name) in names { #expect(name == expected) }
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
