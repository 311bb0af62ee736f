import FleetCore
import FleetGeometry
import Foundation
import Testing

/// Runs Browser/ — fleetd's pages in headless Chromium through Selenium (Debian's chromium,
/// chromium-driver and python3-selenium; `.ci/run` installs them) against `fleetd demo` — as
/// part of `swift test`. Screenshots land in .build/browser-artifacts/.
@Suite("Web pages in Chromium")
struct BrowserTests {
  @Test(.timeLimit(.minutes(15)))
  func pagesWorkInChromium() async throws {
    let artifacts = ConformanceSuiteTests.packageRoot.appendingPathComponent(".build/browser-artifacts").path
    // Debian's Python, where python3-selenium is installed (not a virtualenv's); on a thread of
    // its own, so that minutes of waiting do not hold one of the tests' cooperative threads.
    let (status, output) = try await onDedicatedThread(named: "browser tests") {
      try ConformanceSuiteTests.run(
        ["/usr/bin/python3", "-W", "ignore::ResourceWarning", "Browser/test_pages.py"],
        environment: ["FLEETD_BINARY": ConformanceSuiteTests.fleetdBinary, "ARTIFACTS": artifacts])
    }
    print(output)
    #expect(status == 0, "the browser tests failed:\n\(output)")
    #expect(output.contains("\nOK"))
  }
}
