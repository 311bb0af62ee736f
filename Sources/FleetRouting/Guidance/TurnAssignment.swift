/// OSRM's directions at a junction of four or more roads (turn_handler.cpp's `handleComplexTurn`
/// with `assignLeftTurns`, `assignRightTurns` and `handleDistinctConflict`): the roads on each side
/// of the way on are told apart, so two roads leaving to the right are not both "right".
struct TurnAssignment {
  /// What a road is told: as OSRM's obvious way (said only when the name changes) or a turn.
  enum Decision: Equatable {
    case asObvious
    case turn(RouteStep.Modifier)
  }

  struct Road {
    /// OSRM's turn angle: 180 straight on, below 180 to the right.
    var angle: Double
    var allowed: Bool
    /// OSRM's road priority: lower is more important.
    var priority: Double
  }

  /// The junction's roads by angle, the road arrived by first.
  let roads: [Road]
  private(set) var decisions: [Decision?]

  init(roads: [Road]) {
    self.roads = roads
    decisions = Array(repeating: nil, count: roads.count)
  }

  /// The roads' decisions with the way on (`straightOn`, an index of `roads`) or a fork's outer
  /// roads already settled, or neither.
  static func assigned(_ roads: [Road], around settled: ClosedRange<Int>?) -> TurnAssignment {
    var assignment = TurnAssignment(roads: roads)
    if let settled {
      assignment.assignLeft(from: settled.upperBound)
      assignment.assignRight(upTo: settled.lowerBound)
      return assignment
    }
    guard
      let straightmost = roads.indices.dropFirst().min(by: {
        Guidance.deviation(roads[$0].angle) < Guidance.deviation(roads[$1].angle)
      })
    else { return assignment }
    let angle = roads[straightmost].angle
    if Guidance.deviation(angle) < Guidance.fuzzyAngleDifference && !roads[straightmost].allowed {
      // A straight way on that may not be taken splits the junction.
      assignment.assignLeft(from: straightmost)
      assignment.assignRight(upTo: straightmost)
    } else if angle > 180 {
      assignment.assignLeft(from: straightmost - 1)
      assignment.assignRight(upTo: straightmost)
    } else if angle < 180 {
      assignment.assignLeft(from: straightmost)
      assignment.assignRight(upTo: straightmost + 1)
    } else {
      assignment.assignTrivial(1..<roads.count, mirrored: false)
    }
    return assignment
  }

  // MARK: - One side at a time

  /// The roads left of `index`, as right turns of the junction seen in a mirror.
  mutating func assignLeft(from index: Int) {
    assignRight(upTo: roads.count - index, mirrored: true)
  }

  /// The roads right of `index` (at most three told apart; more get their plain directions).
  mutating func assignRight(upTo end: Int) { assignRight(upTo: end, mirrored: false) }

  private mutating func assignRight(upTo end: Int, mirrored m: Bool) {
    guard end > 1, (1..<end).contains(where: { allowed($0, m) }) else { return }
    switch end {
    case 3:
      if direction(1, m) == direction(2, m) {
        distinguish(left: 2, right: 1, m)
      } else {
        assignTrivial(1..<end, mirrored: m)
      }
    case 4:
      let (first, second, third) = (direction(1, m), direction(2, m), direction(3, m))
      let allowedCount = (1...3).filter { allowed($0, m) }.count
      if first != second && second != third {
        assignTrivial(1..<end, mirrored: m)
      } else if allowedCount <= 2 {
        if !allowed(3, m) {
          distinguish(left: 2, right: 1, m)
        } else if !allowed(1, m) {
          distinguish(left: 3, right: 2, m)
        } else {
          distinguish(left: 3, right: 1, m)
        }
      } else if apart(1, 2, m) >= Guidance.narrowTurnAngle && apart(2, 3, m) >= Guidance.narrowTurnAngle {
        set(1, .turn(.sharpRight), m)
        set(2, .turn(.right), m)
        set(3, .turn(.slightRight), m)
      } else if (first == second && second == third) || (first == second && apart(2, 3, m) < Guidance.groupAngle)
        || (second == third && apart(1, 2, m) < Guidance.groupAngle)
      {
        assignTrivial(1..<end, mirrored: m)
      } else if apart(2, 3, m) >= Guidance.groupAngle {
        distinguish(left: 2, right: 1, m)
        set(3, .turn(third), m)
      } else {
        set(1, .turn(first), m)
        distinguish(left: 3, right: 2, m)
      }
    default:
      assignTrivial(1..<end, mirrored: m)
    }
  }

  /// Two roads that would get the same direction (OSRM's `handleDistinctConflict`, `left` the one
  /// further round to the left).
  private mutating func distinguish(left l: Int, right r: Int, _ m: Bool) {
    let (leftAngle, rightAngle) = (angle(l, m), angle(r, m))
    guard allowed(l, m), allowed(r, m), leftAngle != rightAngle else {
      for p in [l, r] where allowed(p, m) { set(p, .turn(direction(p, m)), m) }
      return
    }
    let (leftDirection, rightDirection) = (direction(l, m), direction(r, m))
    if leftDirection == .straight || leftDirection == .slightLeft || rightDirection == .slightRight {
      // Nearly straight on: the more important road is the way on, the other bends off it.
      if roads[index(l, m)].priority > roads[index(r, m)].priority {
        set(r, .asObvious, m)
        set(l, .turn(.slightLeft), m)
      } else {
        set(l, .asObvious, m)
        set(r, .turn(.slightRight), m)
      }
      return
    }
    let near = { (angle: Double, target: Double) in Guidance.angularDeviation(angle, target) < Guidance.noTurnDeviation
    }
    let pair: (RouteStep.Modifier, RouteStep.Modifier)
    if near(leftAngle, 90) {
      pair = (.right, .sharpRight)
    } else if near(rightAngle, 90) {
      pair = (.slightRight, .right)
    } else if near(leftAngle, 270) {
      pair = (.left, .slightLeft)
    } else if near(rightAngle, 270) {
      pair = (.sharpLeft, .left)
    } else if leftDirection == .sharpLeft {
      pair = (.sharpLeft, .left)
    } else if rightDirection == .sharpRight {
      pair = (.right, .sharpRight)
    } else if Guidance.angularDeviation(leftAngle, 85) >= Guidance.angularDeviation(rightAngle, 85) {
      // OSRM tells right turns apart here whichever side they are on: its left-turn branch
      // compares a direction with 180 and is never taken, and left turns arrive mirrored.
      pair = (.slightRight, .right)
    } else {
      pair = (.right, .sharpRight)
    }
    set(l, .turn(pair.0), m)
    set(r, .turn(pair.1), m)
  }

  mutating func assignTrivial(_ positions: Range<Int>, mirrored m: Bool) {
    for p in positions where allowed(p, m) { set(p, .turn(direction(p, m)), m) }
  }

  // MARK: - The mirror

  /// Seen in a mirror, the junction's roads after the one arrived by come in reverse order.
  private func index(_ position: Int, _ mirrored: Bool) -> Int {
    mirrored && position > 0 ? roads.count - position : position
  }

  private func angle(_ p: Int, _ m: Bool) -> Double {
    let angle = roads[index(p, m)].angle
    return m ? 360 - angle : angle
  }

  private func allowed(_ p: Int, _ m: Bool) -> Bool { roads[index(p, m)].allowed }
  private func direction(_ p: Int, _ m: Bool) -> RouteStep.Modifier { RouteStep.Modifier(turnAngle: angle(p, m)) }
  private func apart(_ a: Int, _ b: Int, _ m: Bool) -> Double { Guidance.angularDeviation(angle(a, m), angle(b, m)) }

  private mutating func set(_ p: Int, _ decision: Decision, _ m: Bool) {
    guard case .turn(let modifier) = decision, m else {
      decisions[index(p, m)] = decision
      return
    }
    decisions[index(p, m)] = .turn(modifier.mirrored)
  }
}

extension RouteStep.Modifier {
  /// The same turn to the other side.
  var mirrored: RouteStep.Modifier {
    switch self {
    case .uturn, .straight: self
    case .right: .left
    case .left: .right
    case .sharpRight: .sharpLeft
    case .sharpLeft: .sharpRight
    case .slightRight: .slightLeft
    case .slightLeft: .slightRight
    }
  }
}
