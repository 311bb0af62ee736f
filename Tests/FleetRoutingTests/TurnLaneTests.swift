import Testing

@testable import FleetRouting

@Suite("Turn lanes")
struct TurnLaneTests {
  @Test func descriptionsReadTurnLanesAsOSRMDoes() {
    #expect(LaneIndications.description("left|through;right|") == [.left, [.straight, .right], .none])
    #expect(LaneIndications.description("left;left|through") == [.left, .straight])
    // One value OSRM does not know spoils the whole description, which is then empty.
    #expect(LaneIndications.description("left|through|slide") == [])
    #expect(LaneIndications.description("left| through") == [])
    #expect(LaneIndications([.straight, .right]).names == ["straight", "right"])
    #expect(LaneIndications.uturn.names == ["uturn"])
  }

  @Test func busLanesAndLanesNoCarMayUseAreLeftOut() {
    let profile = CarProfile()
    let tags = { (dictionary: KeyValuePairs<String, String>) in OSMTags(dictionary.map { ($0.key, $0.value) }) }
    // `vehicle:lanes` names each lane: the ones that are not `yes` go.
    let access = profile.way(
      tags([
        "highway": "primary", "oneway": "yes", "turn:lanes": "left|through|through|right",
        "vehicle:lanes": "yes|yes|no|yes",
      ]))
    #expect(access?.turnLanesForward == "left|through|right")
    #expect(access?.turnLanesBackward == nil)
    // A bus lane at the right edge of the way on, tagged empty, is trimmed by its count.
    let bus = profile.way(
      tags(["highway": "primary", "oneway": "yes", "turn:lanes": "left|through|", "lanes:bus": "1"]))
    #expect(bus?.turnLanesForward == "left|through")
    // Not when the lanes it would trim are marked.
    let marked = profile.way(
      tags(["highway": "primary", "oneway": "yes", "turn:lanes": "left|through", "lanes:bus": "1"]))
    #expect(marked?.turnLanesForward == "left|through")
    // Two-way roads: each direction its own, or both the common value.
    let twoWay = profile.way(
      tags([
        "highway": "secondary", "turn:lanes:forward": "left|through", "turn:lanes": "through|right",
      ]))
    #expect(twoWay?.turnLanesForward == "left|through")
    #expect(twoWay?.turnLanesBackward == "through|right")
  }

  @Test func laneDataCountsFromTheRightAndRejectsCrossingTurns() {
    let data = LaneMatching.laneData([.left, [.left, .straight], .straight, .right])
    #expect(
      data == [
        .init(tag: .right, from: 0, to: 0), .init(tag: .straight, from: 1, to: 2), .init(tag: .left, from: 2, to: 3),
      ])
    // A left lane between two through lanes: the through lanes' turns would cross it.
    #expect(LaneMatching.laneData([.straight, .left, .straight]) == [])
    // A U-turn only at the outside.
    #expect(LaneMatching.laneData([.left, .uturn, .straight]) == [])
  }

  @Test func indicationsMatchTheTurnsTheyStandFor() {
    let road = { (kind: LaneMatching.Kind, modifier: RouteStep.Modifier, angle: Double) in
      LaneMatching.Road(angle: angle, allowed: true, kind: kind, modifier: modifier, isDrivable: true)
    }
    #expect(LaneMatching.isValidMatch(.straight, road(.suppressed, .slightRight, 160)))
    #expect(LaneMatching.isValidMatch(.straight, road(.fork, .slightLeft, 200)))
    #expect(!LaneMatching.isValidMatch(.straight, road(.turn, .slightLeft, 200)))
    // A merge's side is mirrored: merging left is a right-hand lane's move.
    #expect(LaneMatching.isValidMatch(.right, road(.merge, .slightLeft, 200)))
    #expect(!LaneMatching.isValidMatch(.right, road(.turn, .slightLeft, 200)))
    let junction = [
      LaneMatching.Road(angle: 0, allowed: false, kind: .turn, modifier: .uturn, isDrivable: false),
      road(.turn, .right, 90), road(.suppressed, .straight, 180), road(.turn, .left, 270),
    ]
    let data = LaneMatching.laneData([.left, .straight, .right])
    #expect(LaneMatching.isSimple(data, junction))
    let matched = LaneMatching.simpleMatch(junction, data)
    #expect(matched?[1] == RouteStep.LaneRange(count: 1, firstFromRight: 0))
    #expect(matched?[2] == RouteStep.LaneRange(count: 1, firstFromRight: 1))
    #expect(matched?[3] == RouteStep.LaneRange(count: 1, firstFromRight: 2))
    // Lanes for turns the junction does not have are for another junction.
    let tooMany = LaneMatching.laneData([.left, .slightLeft, .straight, .slightRight, .right])
    #expect(!LaneMatching.isSimple(tooMany, junction))
  }
}
