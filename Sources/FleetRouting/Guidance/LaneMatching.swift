/// OSRM's turn lane handling (`turn_lane_data.cpp`, `turn_lane_matcher.cpp`,
/// `turn_lane_augmentation.cpp` and the scenarios of `turn_lane_handler.cpp`): which lanes of the
/// road arrived by serve each way on at a junction, from that road's `turn:lanes`.
///
/// Lanes are counted from the right, as OSRM counts them; descriptions list them from the left.
enum LaneMatching {
  /// A road at the junction as lane matching reads it (OSRM's `ConnectedRoad`), the road arrived
  /// by first: its turn angle, whether it may be entered, and what guidance says for it.
  struct Road {
    var angle: Double
    var allowed: Bool
    var kind: Kind
    var modifier: RouteStep.Modifier
    /// The road may be driven away from the junction at all (OSRM: its edge is not `reversed`).
    var isDrivable: Bool
  }

  /// The instruction types lane matching tells apart.
  enum Kind { case suppressed, newName, merge, fork, `continue`, turn, sliproad }

  /// OSRM's `TurnLaneData`: one indication and the lanes showing it, from `from` to `to`.
  struct LaneData: Equatable {
    var tag: LaneIndications
    var from: Int
    var to: Int
  }

  /// OSRM's `TurnLaneScenario`, as far as it decides anything.
  enum Scenario { case none, simple, partitionLocal, simplePrevious, partitionPrevious, sliproad, merge, unknown }

  // MARK: - Lane data (turn_lane_data.cpp)

  /// OSRM's `TurnLaneData::operator<`: by lanes from the right, then by turn direction from the
  /// right, a U-turn on the outside.
  static func precedes(_ a: LaneData, _ b: LaneData) -> Bool {
    if a.from != b.from { return a.from < b.from }
    if a.to != b.to { return a.to < b.to }
    if a.tag == b.tag { return false }
    if a.tag == .uturn { return a.from == 0 }
    if b.tag == .uturn { return b.from != 0 }
    return rank(a.tag) < rank(b.tag)
  }

  static let fromTheRight: [LaneIndications] = [
    .sharpRight, .right, .slightRight, .straight, .slightLeft, .left, .sharpLeft, .uturn,
  ]

  static func rank(_ tag: LaneIndications) -> Int { fromTheRight.firstIndex(of: tag) ?? fromTheRight.count }

  /// OSRM's `laneDataFromDescription`: each indication with the lanes that show it; empty when
  /// turns would cross (two indications overlapping by more than a lane, a U-turn in the middle).
  static func laneData(_ description: [LaneIndications]) -> [LaneData] {
    var data: [LaneData] = []
    for (position, lane) in description.enumerated() {
      let number = description.count - 1 - position
      for bit in 0..<LaneIndications.vocabulary.count where lane.rawValue & (1 << bit) != 0 {
        let tag = LaneIndications(rawValue: 1 << bit)
        if let i = data.firstIndex(where: { $0.tag == tag }) {
          data[i].from = number
        } else {
          data.append(LaneData(tag: tag, from: number, to: number))
        }
      }
    }
    data = stableSorted(data)
    for index in data.indices.dropFirst() {
      if index + 1 < data.count && data[index].tag.contains(.uturn) { return [] }
      if data[index - 1].to > data[index].from { return [] }
    }
    return data
  }

  static func stableSorted(_ data: [LaneData]) -> [LaneData] {
    data.enumerated().sorted {
      precedes($0.element, $1.element) || (!precedes($1.element, $0.element) && $0.offset < $1.offset)
    }.map(\.element)
  }

  static func findTag(_ tag: LaneIndications, _ data: [LaneData]) -> Int? {
    data.firstIndex { !$0.tag.isDisjoint(with: tag) }
  }

  static func hasTag(_ tag: LaneIndications, _ data: [LaneData]) -> Bool { findTag(tag, data) != nil }

  // MARK: - Matching (turn_lane_matcher.cpp)

  static func hasLeftModifier(_ m: RouteStep.Modifier) -> Bool { m == .slightLeft || m == .left || m == .sharpLeft }
  static func hasRightModifier(_ m: RouteStep.Modifier) -> Bool {
    m == .slightRight || m == .right || m == .sharpRight
  }

  /// OSRM's `isValidMatch`: whether an indication may stand for a road's instruction.
  static func isValidMatch(_ tag: LaneIndications, _ road: Road) -> Bool {
    let mirrored = road.kind == .merge
    switch tag {
    case .uturn: return hasLeftModifier(road.modifier) || road.modifier == .uturn
    case .sharpRight, .right, .slightRight:
      return mirrored ? hasLeftModifier(road.modifier) : hasRightModifier(road.modifier)
    case .straight:
      return road.modifier == .straight || road.kind == .suppressed || road.kind == .newName
        || ((road.kind == .fork || road.kind == .continue)
          && (road.modifier == .slightLeft || road.modifier == .slightRight))
    case .slightLeft, .left, .sharpLeft:
      return mirrored ? hasRightModifier(road.modifier) : hasLeftModifier(road.modifier)
    default: return false
    }
  }

  /// OSRM's `getMatchingQuality`: how far a road's angle is from the indication's ideal one.
  static func matchingQuality(_ tag: LaneIndications, _ road: Road) -> Double {
    let ideal: Double =
      switch tag {
      case .sharpRight: 35
      case .right: 90
      case .slightRight: 135
      case .straight, .mergeToLeft, .mergeToRight: 180
      case .slightLeft: 225
      case .left: 270
      case .sharpLeft: 315
      default: 0
      }
    return Guidance.angularDeviation(ideal, road.angle)
  }

  /// OSRM's `findBestMatch`: a valid match first, then an allowed one, then the closest angle.
  static func bestMatch(_ tag: LaneIndications, _ roads: [Road], from start: Int = 0) -> Int {
    var best = start
    for i in roads.indices.dropFirst(start + 1) {
      let (a, b) = (roads[i], roads[best])
      let (validA, validB) = (isValidMatch(tag, a), isValidMatch(tag, b))
      let better =
        validA != validB
        ? validA : a.allowed != b.allowed ? a.allowed : matchingQuality(tag, a) < matchingQuality(tag, b)
      if better { best = i }
    }
    return best
  }

  /// OSRM's `findBestMatchForReverse`: a U-turn lane beside the lane of `neighbour` is the
  /// U-turn-most road from that lane's road on.
  static func bestMatchForReverse(neighbour: LaneIndications, _ roads: [Road]) -> Int {
    let neighbourRoad = bestMatch(neighbour, roads)
    if neighbourRoad + 1 == roads.count { return 0 }
    return bestMatch(.uturn, roads, from: neighbourRoad)
  }

  /// OSRM's `canMatchTrivially`: the indications, from the right, are the allowed roads' best
  /// matches, in order.
  static func canMatchTrivially(_ roads: [Road], _ data: [LaneData]) -> Bool {
    var lane = 0
    if let first = data.first, first.tag == .uturn, roads[0].allowed { lane = 1 }
    for index in roads.indices.dropFirst() where lane < data.count && roads[index].allowed {
      guard isValidMatch(data[lane].tag, roads[index]), bestMatch(data[lane].tag, roads) == index else {
        return false
      }
      lane += 1
    }
    return lane == data.count || (lane + 1 == data.count && data.last!.tag == .uturn)
  }

  static func lanes(_ data: LaneData) -> RouteStep.LaneRange {
    RouteStep.LaneRange(count: data.to - data.from + 1, firstFromRight: data.from)
  }

  /// OSRM's `triviallyMatchLanesToTurns`: the lanes of each road, by index in `roads`.
  static func matchTrivially(_ roads: [Road], _ data: [LaneData]) -> [Int: RouteStep.LaneRange] {
    var result: [Int: RouteStep.LaneRange] = [:]
    var roadIndex = 1
    var lane = 0
    if let first = data.first, first.tag == .uturn {
      // A U-turn lane on the right (where traffic keeps left).
      guard roads[0].allowed else { return result }
      var uTurn = 0
      if !roads[0].isDrivable {
        guard roads.count > 1, roads[1].allowed, roads[1].modifier == .sharpRight else { return result }
        uTurn = 1
        roadIndex = 2
      }
      // OSRM takes the last indication here.
      result[uTurn] = lanes(data.last!)
      lane = 1
    }
    while roadIndex < roads.count && lane < data.count {
      if roads[roadIndex].allowed {
        result[roadIndex] = lanes(data[lane])
        lane += 1
      }
      roadIndex += 1
    }
    if lane + 1 == data.count, data.last!.tag == .uturn {
      var uTurn = 0
      if !roads[0].isDrivable {
        guard roads.last!.allowed, roads.last!.modifier == .sharpLeft else { return result }
        uTurn = roads.count - 1
      }
      result[uTurn] = lanes(data.last!)
    }
    return result
  }

  static func allowedCount(_ roads: [Road]) -> Int { roads.filter(\.allowed).count }

  // MARK: - Scenarios (turn_lane_handler.cpp)

  /// OSRM's `isSimpleIntersection`: the lanes all belong to this junction's turns.
  static func isSimple(_ data: [LaneData], _ roads: [Road]) -> Bool {
    guard !data.isEmpty else { return false }
    if roads.count == 2 {
      return data.filter { !$0.tag.isDisjoint(with: [.mergeToLeft, .mergeToRight]) }.count + 1 >= data.count
    }
    var turns = allowedCount(roads)
    if turns < data.count, !roads[0].allowed, data.last!.tag == .uturn { turns += 1 }
    if turns + 2 <= data.count { return false }
    if turns + 1 == data.count, data.first!.tag != .none, data.last!.tag != .none { return false }
    if turns > data.count, !data.contains(where: { $0.tag == .none }) { return false }
    if turns > data.count, roads[0].allowed,
      !(hasTag(.uturn, data) || (data.last!.tag != .left && data.last!.tag != .sharpLeft))
    {
      return false
    }
    var allSimple = true
    var hasNone = false
    var matched = Set<Int>()
    for (index, item) in data.enumerated() {
      if item.tag == .none {
        hasNone = true
        continue
      }
      let best: Int
      if item.tag != .uturn || data.count == 1 {
        best = bestMatch(item.tag, roads)
      } else if index + 1 == data.count {
        best = bestMatchForReverse(neighbour: data[index - 1].tag, roads)
      } else if index == 0 {
        best = bestMatchForReverse(neighbour: data[index + 1].tag, roads)
      } else {
        best = 0
      }
      allSimple = allSimple && !matched.contains(best)
      matched.insert(best)
      allSimple =
        allSimple && (roads[best].allowed || ((best == 0 || best + 1 == roads.count) && roads[best].isDrivable))
      allSimple = allSimple && isValidMatch(item.tag, roads[best])
    }
    return allSimple && (matched.count == data.count || (matched.count + 1 == data.count && hasNone))
  }

  /// OSRM's `partitionLaneData`: at a junction whose straightmost road soon reaches another, the
  /// lanes for turns there (`second`) apart from those for turns here (`first`), the straightmost
  /// road here taking all of the lanes for there. `next` gives the roads at the junction the
  /// straightmost road leads to.
  static func partition(_ data: [LaneData], _ roads: [Road], next: (Int) -> [Road]?) -> (
    first: [LaneData], second: [LaneData]
  ) {
    var data = data
    let straightmost = roads.indices.min {
      Guidance.angularDeviation(roads[$0].angle, 180) < Guidance.angularDeviation(roads[$1].angle, 180)
    }!
    guard roads[straightmost].allowed, let nextRoads = next(straightmost), !nextRoads.isEmpty else {
      return (data, [])
    }
    var atFirst = Array(repeating: false, count: data.count)
    var atSecond = atFirst
    var straightmostTag = data.count
    for lane in data.indices {
      let tag = data[lane].tag
      if !tag.isDisjoint(with: [.none, .uturn]) { continue }
      let best = bestMatch(tag, roads)
      if roads[best].allowed, isValidMatch(tag, roads[best]) {
        atFirst[lane] = true
        if straightmost == best { straightmostTag = lane }
      }
      let bestNext = bestMatch(tag, nextRoads)
      if nextRoads[bestNext].allowed, isValidMatch(tag, nextRoads[bestNext]),
        !atFirst[lane] || tag == .straight
          || matchingQuality(tag, roads[best]) > matchingQuality(tag, nextRoads[bestNext])
      {
        if tag != .straight { atFirst[lane] = false }
        atSecond[lane] = true
      }
      guard atFirst[lane] || atSecond[lane] else { return (data, []) }
    }
    let noneIndex = findTag(.none, data) ?? data.count
    if straightmostTag == data.count, noneIndex != data.count { straightmostTag = noneIndex }
    if noneIndex != data.count {
      if atFirst.filter({ $0 }).count <= allowedCount(roads) { atFirst[noneIndex] = true }
      if atSecond.filter({ $0 }).count <= allowedCount(nextRoads) { atSecond[noneIndex] = true }
    }
    let augmented = { (entry: LaneData) -> LaneData in
      var entry = entry
      for lane in data.indices where atSecond[lane] {
        entry.from = min(data[lane].from, entry.from)
        entry.to = max(data[lane].to, entry.to)
      }
      return entry
    }
    var first: [LaneData] = []
    var second: [LaneData] = []
    for lane in data.indices {
      if atSecond[lane] { second.append(data[lane]) }
      if lane == straightmostTag { data[lane] = augmented(data[lane]) }
      if atFirst[lane] { first.append(data[lane]) }
    }
    let nextTurns = allowedCount(nextRoads)
    if straightmostTag == data.count, nextTurns > 0, atSecond.filter({ $0 }).count == nextTurns {
      first.append(augmented(LaneData(tag: .straight, from: 255, to: 0)))
      first = stableSorted(first)
    }
    return (first, second)
  }

  // MARK: - None lanes (turn_lane_augmentation.cpp)

  static let byModifier: [RouteStep.Modifier: LaneIndications] = [
    .uturn: .uturn, .sharpRight: .sharpRight, .right: .right, .slightRight: .slightRight, .straight: .straight,
    .slightLeft: .slightLeft, .left: .left, .sharpLeft: .sharpLeft,
  ]

  /// OSRM's `handleNoneValueAtSimpleTurn`: lanes without arrows given the turns they must serve.
  static func handleNone(_ data: [LaneData], _ roads: [Road]) -> [LaneData] {
    guard !roads.isEmpty, !data.isEmpty, let noneIndex = findTag(.none, data) else { return data }
    var data = data
    let connections = allowedCount(roads) - (roads[0].allowed && data.last!.tag != .uturn ? 1 : 0)
    if connections > data.count {
      data = augmentMultiple(noneIndex, connections, data, roads)
    } else if connections < data.count {
      guard connections + 1 == data.count else { return data }
      data = mergeNone(noneIndex, data)
    } else {
      data = renamed(noneIndex, data, roads)
    }
    return stableSorted(data)
  }

  /// OSRM's `augmentMultiple`: a none lane serving several turns gets one indication per turn.
  static func augmentMultiple(_ noneIndex: Int, _ connections: Int, _ data: [LaneData], _ roads: [Road])
    -> [LaneData]
  {
    var data = data
    let needed = connections - data.count
    let range: Range<Int> = {
      if noneIndex == 0 {
        var count = 0
        for index in roads.indices.dropFirst() {
          count += roads[index].allowed ? 1 : 0
          if count > needed { return 1..<(index + 1) }
        }
      } else if noneIndex + 1 == data.count {
        var count = 0
        for index in roads.indices.dropFirst().reversed() {
          count += roads[index].allowed ? 1 : 0
          if count > needed { return index..<roads.count }
        }
      } else {
        var begin = 1
        var count = 0
        for index in roads.indices.dropFirst() {
          count += roads[index].allowed ? 1 : 0
          if count >= noneIndex {
            begin = index + 1
            break
          }
        }
        count = 0
        for index in begin..<max(begin, roads.count) {
          count += roads[index].allowed ? 1 : 0
          if count > needed { return begin..<(index + 1) }
        }
      }
      return 0..<0
    }()
    let none = data[noneIndex]
    let allowedInRange = range.filter { roads[$0].allowed }.count
    if allowedInRange > 1, none.to - none.from >= 1 {
      if let straight = range.first(where: { roads[$0].modifier == .straight }) {
        for index in range.lowerBound..<straight {
          data.append(LaneData(tag: byModifier[roads[index].modifier]!, from: none.from, to: none.from))
        }
        data.append(LaneData(tag: byModifier[roads[straight].modifier]!, from: none.from, to: none.to))
        for index in (straight + 1)..<range.upperBound {
          data.append(LaneData(tag: byModifier[roads[index].modifier]!, from: none.to, to: none.to))
        }
        data.remove(at: noneIndex)
      }
      return data
    }
    for index in range where roads[index].allowed {
      data.append(LaneData(tag: byModifier[roads[index].modifier]!, from: none.from, to: none.to))
    }
    data.remove(at: noneIndex)
    return data
  }

  /// OSRM's `mergeNoneTag`: a none lane joins its neighbour ("left| | |right").
  static func mergeNone(_ noneIndex: Int, _ data: [LaneData]) -> [LaneData] {
    var data = data
    if noneIndex == 0 || noneIndex + 1 == data.count {
      if noneIndex == 0 {
        data[1].from = data[0].from
      } else {
        data[noneIndex - 1].to = data[noneIndex].to
      }
      data.remove(at: noneIndex)
    } else if data[noneIndex].to - data[noneIndex].from <= 1 {
      data[noneIndex - 1].to = data[noneIndex].from
      data[noneIndex + 1].from = data[noneIndex].to
      data.remove(at: noneIndex)
    }
    return data
  }

  /// OSRM's `handleRenamingSituations`: a none lane is the turn its side misses.
  static func renamed(_ noneIndex: Int, _ data: [LaneData], _ roads: [Road]) -> [LaneData] {
    var data = data
    let modifiers = roads.filter(\.allowed).map(\.modifier)
    let hasRight = modifiers.contains(where: hasRightModifier)
    let hasThrough = modifiers.contains(.straight)
    let hasLeft = modifiers.contains(where: hasLeftModifier)
    if noneIndex == 0 {
      if hasRight, data.count == 1 || (data[1].tag != .sharpRight && data[1].tag != .right) {
        data[0].tag = .right
        if data.count > 1, data[1].tag == .straight {
          data[1].from = data[0].from
          data[0].to = data[0].from
        }
      } else if hasThrough, data.count == 1 || data[1].tag != .straight {
        data[0].tag = .straight
      }
    } else if noneIndex + 1 == data.count {
      if hasLeft, data[noneIndex - 1].tag != .sharpLeft, data[noneIndex - 1].tag != .left {
        data[noneIndex].tag = .left
        if data[noneIndex - 1].tag == .straight {
          data[noneIndex - 1].to = data[noneIndex].to
          data[noneIndex].from = data[noneIndex].to
        }
      } else if hasThrough, data[noneIndex - 1].tag != .straight {
        data[noneIndex].tag = .straight
      }
    } else if [.left, .slightLeft, .sharpLeft].contains(data[noneIndex + 1].tag),
      [.right, .slightRight, .sharpRight].contains(data[noneIndex - 1].tag)
    {
      data[noneIndex].tag = .straight
    }
    return data
  }

  /// OSRM's `simpleMatchTuplesToTurns`.
  static func simpleMatch(_ roads: [Road], _ data: [LaneData]) -> [Int: RouteStep.LaneRange]? {
    guard !data.isEmpty, canMatchTrivially(roads, data) else { return nil }
    return matchTrivially(roads, data)
  }
}
