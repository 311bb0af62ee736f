import FleetGeometry
import Testing

@testable import FleetRouting

/// Spoken and banner instructions for steps (`Instructions`): OSRM's English wording, each
/// step's instructions about the maneuver at its end, given in order as it nears.
@Suite("Step instructions")
struct InstructionTests {
  func step(
    _ kind: RouteStep.Kind, _ modifier: RouteStep.Modifier? = nil, name: String = "", ref: String = "",
    destinations: String = "", exit: Int? = nil, bearing: Int = 0, metres: Double = 100, seconds: Double = 10
  ) -> RouteStep {
    RouteStep(
      maneuver: RouteStep.Maneuver(
        location: LatLng(latitude: 43.7, longitude: 7.4), bearingBefore: 0, bearingAfter: bearing, kind: kind,
        modifier: modifier, exit: exit),
      name: name, ref: ref, destinations: destinations, exits: "", rotaryName: "", isFerry: false, drivingSide: .right,
      geometry: [], distance: metres, duration: seconds, weight: seconds, intersections: [])
  }

  @Test func eachManeuverIsSaidAsOSRMSaysIt() {
    let cases: [(RouteStep, String)] = [
      (step(.depart, name: "Rue Grimaldi", bearing: 350), "Head north on Rue Grimaldi"),
      (step(.depart, bearing: 135), "Head southeast"),
      (step(.turn, .left, name: "Main Street"), "Turn left onto Main Street"),
      (step(.turn, .sharpRight, name: "Main Street", ref: "A7"), "Turn sharp right onto Main Street (A7)"),
      (step(.turn, .straight, name: "Main Street"), "Go straight onto Main Street"),
      (step(.turn, .uturn), "Make a U-turn"),
      (step(.endOfRoad, .right, name: "Quai"), "Turn right onto Quai"),
      (step(.newName, .straight, name: "Avenue"), "Continue onto Avenue"),
      (step(.newName, .slightLeft, name: "Avenue"), "Continue slight left onto Avenue"),
      (step(.continue, .straight), "Continue"),
      (step(.merge, .slightLeft, ref: "A8"), "Merge left onto A8"),
      (step(.onRamp, .right, ref: "A8"), "Take the ramp on the right onto A8"),
      (step(.offRamp, .slightRight, destinations: "Nice"), "Take the exit on the right toward Nice"),
      (step(.fork, .slightLeft, name: "Tunnel"), "Keep left at the fork onto Tunnel"),
      (
        step(.roundabout, .right, name: "Boulevard", exit: 2),
        "Enter the roundabout and take the second exit onto Boulevard"
      ),
      (step(.exitRoundabout, .right, name: "Boulevard"), "Exit the roundabout onto Boulevard"),
      (step(.arrive, .right), "You have arrived at your destination, on the right"),
      (step(.arrive), "You have arrived at your destination"),
    ]
    for (s, text) in cases { #expect(Instructions.text(for: s) == text) }
  }

  @Test func aStepAnnouncesTheManeuverAtItsEndAsItNears() {
    let steps = [
      step(.depart, name: "A Street", bearing: 90, metres: 1200, seconds: 1200 / 14),
      step(.turn, .left, name: "B Street", metres: 300, seconds: 30),
      step(.arrive, .right, metres: 0, seconds: 0),
    ]
    let all = Instructions.of(steps)
    #expect(all.count == 3)
    // Leaving: the departure, a warning 800 m ahead (14 m/s), the turn itself 6 s before it.
    #expect(
      all[0].spoken.map(\.announcement) == [
        "Head east on A Street", "In 800 meters, turn left onto B Street", "Turn left onto B Street",
      ])
    #expect(all[0].spoken.map(\.distanceAlongGeometry) == [1200, 800, 84])
    #expect(
      all[0].spoken[1].ssmlAnnouncement.contains("In 800 meters")
        && all[0].spoken[1].ssmlAnnouncement.hasPrefix("<speak>"))
    #expect(
      all[0].banners == [
        StepInstructions.Banner(distanceAlongGeometry: 1200, text: "B Street", kind: .turn, modifier: .left, exit: nil)
      ])
    // A short step: the arrival only, within the step.
    #expect(all[1].spoken.map(\.announcement) == ["You have arrived at your destination, on the right"])
    #expect(all[1].spoken.allSatisfy { $0.distanceAlongGeometry <= 300 })
    #expect(all[1].banners.map(\.text) == ["Your destination"] && all[1].banners[0].kind == .arrive)
    #expect(all[2].spoken.isEmpty && all[2].banners.isEmpty)
    // A short first step says the next maneuver with the departure.
    let short = Instructions.of([step(.depart, name: "A", metres: 120, seconds: 12), steps[1], steps[2]])
    #expect(short[0].spoken.map(\.announcement) == ["Head north on A, then turn left onto B Street"])
    // A long step after a maneuver says how long it goes on.
    let long = Instructions.of([steps[0], step(.turn, .right, name: "C", metres: 5000, seconds: 200), steps[2]])
    #expect(long[1].spoken.first?.announcement == "Continue for 5 kilometers")
    #expect(long[1].spoken.map(\.distanceAlongGeometry) == long[1].spoken.map(\.distanceAlongGeometry).sorted(by: >))
  }

  @Test func bannersDrawTheLanesOfTheManeuver() {
    var turn = step(.turn, .left, name: "North")
    turn.intersections = [
      RouteStep.Intersection(
        location: turn.maneuver.location, bearings: [0, 90, 180, 270], entry: [true, true, false, true],
        arrivingRoad: 2, leavingRoad: 3, classes: [], laneDescription: [[.left, .straight], .straight, .right],
        turnLanes: RouteStep.LaneRange(count: 1, firstFromRight: 2))
    ]
    let banners = Instructions.of([step(.depart, name: "Main"), turn, step(.arrive)])[0].banners
    #expect(
      banners.first?.lanes == [
        .init(directions: ["straight", "left"], active: true, activeDirection: "left"),
        .init(directions: ["straight"], active: false, activeDirection: nil),
        .init(directions: ["right"], active: false, activeDirection: nil),
      ])
    // No lanes where the maneuver's road says none.
    #expect(Instructions.of([step(.depart), step(.turn, .left), step(.arrive)])[0].banners.first?.lanes == [])
  }

  @Test func distancesAreRoundedAsSaid() {
    #expect(Instructions.spokenDistance(430) == "450 meters")
    #expect(Instructions.spokenDistance(74) == "70 meters")
    #expect(Instructions.spokenDistance(990) == "1 kilometer")
    #expect(Instructions.spokenDistance(1540) == "1.5 kilometers")
    #expect(Instructions.spokenDistance(12_400) == "12 kilometers")
    #expect(Instructions.spokenDistance(100, .imperial) == "350 feet")
    #expect(Instructions.spokenDistance(1609.344, .imperial) == "1 mile")
    #expect(Instructions.spokenDistance(3218.688, .imperial) == "2 miles")
  }
}
