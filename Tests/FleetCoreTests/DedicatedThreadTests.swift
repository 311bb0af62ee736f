import FleetGeometry
import Foundation
import Testing

@Suite("Work on a dedicated thread")
struct DedicatedThreadTests {
  struct Refused: Error, Equatable { let reason: String }

  @Test func theWorkRunsOnAThreadOfItsOwnAndItsResultComesBack() async {
    let (name, value) = await onDedicatedThread(named: "dispatch round") { (Thread.current.name, 6 * 7) }
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
