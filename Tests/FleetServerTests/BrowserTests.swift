import FleetTestSupport
import Foundation
import Testing

/// Runs Browser/ — fleetd's pages in headless Chromium through Selenium (Debian's chromium,
/// chromium-driver and python3-selenium; `.ci/run` installs them) against `fleetd demo` — as
/// part of `swift test`. Screenshots land in .build/browser-artifacts/.
@Suite("Web pages in Chromium")
struct BrowserTests {
  @Test(.timeLimit(.minutes(15)))
  func pagesWorkInChromium() async throws {
    let artifacts = ChildProcess.packageRoot.appendingPathComponent(".build/browser-artifacts").path
    // Debian's Python, where python3-selenium is installed (not a virtualenv's).
    let outcome = try await ChildProcess.run(
      "/usr/bin/python3", ["-W", "ignore::ResourceWarning", "Browser/test_pages.py"],
      environment: ["FLEETD_BINARY": ChildProcess.built("fleetd"), "ARTIFACTS": artifacts],
      directory: ChildProcess.packageRoot)
    let (status, output) = (outcome.status, outcome.output + outcome.errors)
    print(output)
    #expect(status == 0, "the browser tests failed:\n\(output)")
    #expect(output.contains("\nOK"))
  }
}
