extension StepCollapsing {
  /// OSRM's `anticipateLaneChange`: in a run of steps too short to change lanes between, each
  /// step's lanes narrow to those from which the next step's lanes can be reached. Two silent
  /// steps left with the same lanes become one.
  mutating func anticipateLaneChanges(minimumDistance: Double = 200) {
    let live = drafts.indices.filter { drafts[$0].instruction != .none }
    var runs: [[Int]] = []
    var run: [Int] = []
    for i in live + [-1] {
      if i >= 0, isShortWithLanes(i, minimumDistance: minimumDistance) {
        run.append(i)
      } else {
        if run.count > 1 { runs.append(run) }
        run = []
      }
    }
    // A keep-straight's lanes follow the side of the turn after it.
    var straightLeft = Set<Int>()
    var straightRight = Set<Int>()
    for run in runs {
      var distanceToConstrained = 0.0
      for k in stride(from: run.count - 1, to: 0, by: -1) {
        let (current, previous) = (run[k], run[k - 1])
        guard let currentLanes = drafts[current].step.intersections.first?.turnLanes,
          let previousLanes = drafts[previous].step.intersections.first?.turnLanes
        else { continue }
        distanceToConstrained = isSuppressed(previous) ? distanceToConstrained + length(previous) : 0
        let delta = previousLanes.count - currentLanes.count
        let canMakeAllTurns = distanceToConstrained > Double(delta) * minimumDistance
        guard previousLanes.count > 1, previousLanes.count > currentLanes.count, !canMakeAllTurns else { continue }
        let (rightOfTurn, leftOfTurn) = (lanesToTheRight(current), lanesToTheLeft(current))
        if !isLeftTurn(previous) && !isRightTurn(previous) {
          if isLeftTurn(current) || straightLeft.contains(current) {
            straightLeft.insert(previous)
          } else if isRightTurn(current) || straightRight.contains(current) {
            straightRight.insert(previous)
          }
        }
        var first: Int
        if isLeftTurn(current) || (!isRightTurn(current) && straightLeft.contains(current)) {
          // Keep left already: the rightmost lanes drop out.
          first = previousLanes.firstFromRight + previousLanes.count - currentLanes.count
          first -= min(leftOfTurn, currentLanes.count)
        } else {
          first = previousLanes.firstFromRight + min(rightOfTurn, currentLanes.count)
        }
        // OSRM counts lanes in a byte.
        first = (first % 256 + 256) % 256
        let narrowed = RouteStep.LaneRange(count: currentLanes.count, firstFromRight: first)
        drafts[previous].step.intersections[0].turnLanes = narrowed
        if isSuppressed(previous), isSuppressed(current), haveSameMode(previous, current), narrowed == currentLanes {
          elongate(previous, by: current)
          invalidate(current)
        }
      }
    }
  }

  /// A step with lanes too short to cross the lanes beside its turn.
  func isShortWithLanes(_ i: Int, minimumDistance: Double) -> Bool {
    guard let lanes = drafts[i].step.intersections.first?.turnLanes, lanes.count > 0 else { return false }
    let toCross = max(lanesToTheRight(i), lanesToTheLeft(i))
    return length(i) < Double(1 + toCross) * minimumDistance
  }

  func lanesToTheRight(_ i: Int) -> Int {
    guard let first = drafts[i].step.intersections.first, !first.laneDescription.isEmpty else { return 0 }
    return first.turnLanes?.firstFromRight ?? 0
  }

  func lanesToTheLeft(_ i: Int) -> Int {
    guard let first = drafts[i].step.intersections.first, !first.laneDescription.isEmpty else { return 0 }
    return first.laneDescription.count - ((first.turnLanes?.count ?? 0) + lanesToTheRight(i))
  }

  /// OSRM's `isLeftTurn` and `isRightTurn`: a merge's side is the side it merges from.
  func isLeftTurn(_ i: Int) -> Bool {
    guard let modifier = modifier(i) else { return false }
    return isType(i, .merge) ? LaneMatching.hasRightModifier(modifier) : LaneMatching.hasLeftModifier(modifier)
  }

  func isRightTurn(_ i: Int) -> Bool {
    guard let modifier = modifier(i) else { return false }
    return isType(i, .merge) ? LaneMatching.hasLeftModifier(modifier) : LaneMatching.hasRightModifier(modifier)
  }
}
