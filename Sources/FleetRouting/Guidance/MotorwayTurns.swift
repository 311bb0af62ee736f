/// OSRM's decisions where motorways and their slip roads meet (motorway_handler.cpp): leaving a
/// motorway, slip roads joining one, motorways forking, and the slip roads passed on the way.
struct MotorwayTurns {
  /// What a road is told.
  enum Instruction: Equatable {
    case announced(RouteStep.Kind, RouteStep.Modifier)
    /// As the obvious way on (OSRM's `getInstructionForObvious`), through a street or not.
    case obvious(throughStreet: Bool)
    /// Driven on without a word.
    case silent
  }

  struct Road {
    /// OSRM's turn angle; 0 for the road arrived by.
    var angle: Double
    var allowed: Bool
    var roadClass: RoadClass
    var label: RoadLabel
    var isThroughStreet: Bool
    /// Whether driving onto it from the road arrived by must be said (OSRM's `requiresAnnouncement`).
    var requiresAnnouncement: Bool
  }

  /// The junction's roads by angle, the road arrived by first.
  let roads: [Road]
  private(set) var instructions: [Instruction?]

  init(roads: [Road]) {
    self.roads = roads
    instructions = Array(repeating: nil, count: roads.count)
  }

  /// OSRM's `isRampClass`: a motorway's slip road, or any slip road off a motorway.
  static func isRamp(_ roadClass: RoadClass, fromMotorway: Bool) -> Bool {
    roadClass.isRamp || (fromMotorway && roadClass.isLink)
  }

  /// Whether this junction is one for these rules (OSRM's `canProcess`): every way on within 60° of
  /// straight, only motorways and slip roads, and a motorway to take or come from.
  static func applies(to roads: [Road]) -> Bool {
    guard let arriving = roads.first else { return false }
    let fromMotorway = arriving.roadClass.isMotorway
    var hasMotorway = false
    for road in roads {
      if road.allowed && Guidance.deviation(road.angle) > 60 { return false }
      if road.roadClass.isMotorway {
        if road.allowed { hasMotorway = true }
      } else if !isRamp(road.roadClass, fromMotorway: fromMotorway) {
        return false
      }
    }
    return hasMotorway || fromMotorway
  }

  static func assigned(_ roads: [Road]) -> MotorwayTurns {
    var turns = MotorwayTurns(roads: roads)
    if roads[0].roadClass.isMotorway {
      turns.fromMotorway()
      // Onto a slip road from a motorway is off it.
      for i in turns.instructions.indices {
        if case .announced(.onRamp, let modifier)? = turns.instructions[i] {
          turns.instructions[i] = .announced(.offRamp, modifier)
        }
      }
    } else {
      turns.fromRamp()
    }
    return turns
  }

  // MARK: - From a motorway

  mutating func fromMotorway() {
    let arriving = roads[0]
    // The way the motorway goes on: by its name, else the straightest motorway.
    var continueAngle = roads.first { road in
      road.allowed && road.angle != 0 && !arriving.label.isEmpty && !road.label.isEmpty && road.roadClass.isMotorway
        && !RoadNames.requiresNameAnnounced(from: arriving.label, to: road.label)
    }?.angle
    if continueAngle == nil {
      var best = 180.0
      for road in roads where road.roadClass.isMotorway && Guidance.deviation(road.angle) < best {
        best = Guidance.deviation(road.angle)
        continueAngle = road.angle
      }
    }
    guard let continueAngle, continueAngle != roads[0].angle else {
      // The motorway ends here.
      switch roads.count {
      case 2:
        instructions[1] = .silent
      case 3:
        if roads[1].allowed && roads[2].allowed {
          assignFork(left: 2, right: 1)
        } else {
          instructions[roads[1].allowed ? 1 : 2] = .silent
        }
      case 4 where roads[1].roadClass == roads[2].roadClass && roads[2].roadClass == roads[3].roadClass:
        assignFork(left: 3, center: 2, right: 1)
      default:
        fallback()
      }
      return
    }
    let validExits = roads.filter(\.allowed).count
    let exitingMotorways = roads.filter { $0.allowed && $0.roadClass.isMotorway }.count
    if exitingMotorways == 0 {
      // The motorway ends in slip roads.
      for i in roads.indices where roads[i].allowed { instructions[i] = .silent }
    } else if exitingMotorways == 1 || exitingMotorways != validExits {
      // Passing slip roads, or merging onto another motorway.
      if roads.count == 2 {
        instructions[1] = .obvious(throughStreet: roads[1].isThroughStreet)
        return
      }
      for i in roads.indices where roads[i].allowed {
        let road = roads[i]
        let kind: RouteStep.Kind = Self.isRamp(road.roadClass, fromMotorway: true) ? .offRamp : .turn
        if road.angle == continueAngle {
          // OSRM asks whether the junction's second road is a through street, whichever this is.
          instructions[i] = .obvious(throughStreet: roads[1].isThroughStreet)
        } else if road.angle < continueAngle {
          instructions[i] = .announced(kind, road.angle < 145 ? .right : .slightRight)
        } else {
          instructions[i] = .announced(kind, road.angle > 215 ? .left : .slightLeft)
        }
      }
    } else {
      // Motorways forking.
      let motorways = roads.indices.filter { roads[$0].allowed && roads[$0].roadClass.isMotorway }
      switch motorways.count {
      case 2: assignFork(left: motorways[1], right: motorways[0])
      case 3: assignFork(left: motorways[2], center: motorways[1], right: motorways[0])
      default: fallback()
      }
    }
  }

  // MARK: - From a slip road

  mutating func fromRamp() {
    let valid = roads.filter(\.allowed).count
    switch roads.count {
    case 2 where valid == 1:
      instructions[1] = .obvious(throughStreet: roads[1].isThroughStreet)
    case 3:
      let sameName = !RoadNames.requiresNameAnnounced(from: roads[2].label, to: roads[1].label)
      let bothNamed = !roads[1].label.name.isEmpty && !roads[2].label.name.isEmpty
      if valid == 1 {
        // Joining a motorway that passes, or the end of one.
        let i = roads[1].allowed ? 1 : 2
        if roads[i].roadClass.isMotorway && bothNamed && sameName {
          let modifier: RouteStep.Modifier =
            Guidance.deviation(roads[i].angle) < 2 * Guidance.narrowTurnAngle
            ? (i == 1 ? .slightLeft : .slightRight) : RouteStep.Modifier(turnAngle: roads[i].angle)
          instructions[i] = .announced(.merge, modifier)
        } else {
          instructions[i] = .obvious(throughStreet: roads[i].isThroughStreet)
        }
      } else if roads[1].roadClass.isMotorway && !roads[2].roadClass.isMotorway {
        // The slip road goes on past a way onto the motorway.
        instructions[1] = .announced(.turn, .slightRight)
        instructions[2] = .announced(.continue, .slightLeft)
      } else {
        assignFork(left: 2, right: 1)
      }
    case 4:
      var passedMotorwayEntry = false
      for i in roads.indices {
        if !roads[i].allowed && roads[i].roadClass.isMotorway {
          passedMotorwayEntry = true
        } else if roads[i].roadClass.isMotorway {
          instructions[i] = .announced(.merge, passedMotorwayEntry ? .slightRight : .slightLeft)
        } else {
          instructions[i] = .announced(.offRamp, RouteStep.Modifier(turnAngle: roads[i].angle))
        }
      }
    default:
      fallback()
    }
  }

  mutating func fallback() {
    for i in roads.indices where roads[i].allowed {
      let angle = roads[i].angle
      if roads[i].roadClass.isMotorway {
        instructions[i] = .announced(.merge, angle < 180 ? .slightLeft : .slightRight)
      } else if Guidance.deviation(angle) < Guidance.fuzzyAngleDifference {
        instructions[i] = .announced(.turn, .straight)
      } else {
        instructions[i] = .announced(.turn, angle > 180 ? .slightLeft : .slightRight)
      }
    }
  }

  // MARK: - Forks (OSRM's `assignFork`)

  mutating func assignFork(left: Int, right: Int) {
    let (minorLeft, minorRight) = (roads[left].roadClass.isLowPriority, roads[right].roadClass.isLowPriority)
    instructions[left] =
      minorRight && !minorLeft ? .silent : .announced(minorLeft && !minorRight ? .turn : .fork, .slightLeft)
    instructions[right] =
      minorLeft && !minorRight ? .silent : .announced(minorRight && !minorLeft ? .turn : .fork, .slightRight)
  }

  mutating func assignFork(left: Int, center: Int, right: Int) {
    switch (roads[left].allowed, roads[center].allowed, roads[right].allowed) {
    case (true, true, true):
      instructions[left] = .announced(.fork, .slightLeft)
      instructions[center] =
        Guidance.deviation(roads[center].angle) < Guidance.noTurnDeviation && !roads[center].requiresAnnouncement
        ? .silent : .announced(.fork, .straight)
      instructions[right] = .announced(.fork, .slightRight)
    case (true, _, true): assignFork(left: left, right: right)
    case (true, true, false): assignFork(left: left, right: center)
    case (false, true, true): assignFork(left: center, right: right)
    default:
      for i in [left, center, right] where roads[i].allowed {
        instructions[i] = .announced(.turn, RouteStep.Modifier(turnAngle: roads[i].angle))
      }
    }
  }
}
