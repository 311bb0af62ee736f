import FleetGeometry

/// OSRM's collapsing of turn instructions (collapse_turns.cpp, collapse_scenario_detection.cpp and
/// collapsing_utility.hpp): maneuvers in quick succession said as one. The junctions passed
/// without a word (OSRM's suppressed turns) take part as steps of their own, so a name change
/// just after one, or a turn just before one, is said where the driver turns; afterwards they
/// join the step before (`buildIntersections`).
struct StepCollapsing {
  enum Instruction: Equatable {
    /// Depart and arrive.
    case waypoint
    case announced(RouteStep.Kind)
    /// A junction passed without a word.
    case suppressed
    /// Onto a sliproad: said with the turn where it ends.
    case sliproad
    /// Merged into another step.
    case none
  }

  struct Draft {
    var instruction: Instruction
    var step: RouteStep
    /// The step begins on a road inside an intersection (OSRM's `is_segregated`).
    var isSegregated = false
    /// An `exit roundabout` or `exit rotary` at a ring touched and left at once, which enters
    /// it too (OSRM's `EnterAndExit` types).
    var entersAndLeavesRing = false
  }

  /// OSRM's `MAX_COLLAPSE_DISTANCE`.
  static let distance = 30.0

  var drafts: [Draft]

  init(_ drafts: [Draft]) { self.drafts = drafts }

  /// The steps as OSRM says them: collapsed, the suppressed junctions in the steps before them.
  static func steps(of drafts: [Draft]) -> [RouteStep] {
    var collapsing = StepCollapsing(drafts)
    collapsing.collapseSegregated()
    collapsing.collapse()
    collapsing.anticipateLaneChanges()
    return collapsing.joined()
  }

  // MARK: - collapseTurnInstructions

  mutating func collapse() {
    guard drafts.count > 2 else { return }
    var current = 1
    while current + 1 < drafts.count {
      defer { current += 1 }
      if Self.entersRoundabout(drafts[current]) || !hasTurn(current) { continue }
      if drafts[current].instruction == .sliproad {
        joinSliproad(current)
        continue
      }
      let next = self.next(after: current)
      if drafts[next].instruction == .waypoint { break }
      let previous = self.previous(before: current)
      if drafts[current].step.isFerry != drafts[next].step.isFerry { continue }

      if isStaggered(previous, current, next) {
        let instruction: Instruction = haveSameName(previous, next) ? .suppressed : .announced(.newName)
        combine(current, next) { at, _ in
          at.step.maneuver.modifier = .straight
          at.instruction = instruction
        }
      } else if isUTurn(previous, current, next) {
        combine(current, next) { at, _ in
          at.instruction = .announced(.continue)
          at.step.maneuver.modifier = .uturn
        }
      } else if isNameOscillation(previous, current, next) {
        suppress(current, into: next)
        suppress(previous, into: current)
      } else if maneuverPrecededByNameChange(previous, current, next)
        || maneuverPrecededBySuppressedDirection(current, next)
      {
        adjustToCombinedTurn(at: next, from: current, prior: previous)
        suppress(previous, into: current)
      } else if maneuverSucceededByNameChange(current, next) || nameChangeImmediatelyAfterSuppressed(current, next)
        || maneuverSucceededBySuppressedDirection(current, next) || closeChoicelessTurnAfterTurn(current, next)
        || straightTurnFollowedByChoiceless(current, next)
      {
        combineAdjusted(current, next, prior: previous)
      } else if suppressedStraightBetweenTurns(previous, current, next) {
        let farBack = self.previous(before: previous)
        elongate(previous, by: current)
        invalidate(current)
        combineAdjusted(previous, next, prior: farBack)
      }

      // Scenarios that only show after a first collapse (a name change right after a U-turn).
      let newNext = self.next(after: current)
      if newNext < drafts.count, doubleChoiceless(current, newNext) {
        combineAdjusted(current, newNext, prior: previous)
      }
      if drafts[previous].instruction != .waypoint {
        let farBack = self.previous(before: previous)
        if isUTurn(farBack, previous, current) {
          combine(previous, current) { at, _ in
            at.instruction = .announced(.continue)
            at.step.maneuver.modifier = .uturn
          }
        }
      }
    }
  }

  /// A sliproad and the turn at its end as one turn where the sliproad begins: a continue when
  /// the road before and the road after share a name (OSRM's `handleSliproad`).
  mutating func joinSliproad(_ sliproad: Int) {
    var next = self.next(after: sliproad)
    // Junctions of two roads passed silently on the way (OSRM's traffic-light steps) join it.
    while isSuppressed(next), drafts[next].step.intersections.first?.entry.count == 2, allowedTurns(next) == 1 {
      elongate(sliproad, by: next)
      invalidate(next)
      next = self.next(after: next)
    }
    guard drafts[next].instruction != .waypoint else {
      drafts[sliproad].instruction = .announced(.turn)
      return
    }
    let previous = self.previous(before: sliproad)
    drafts[sliproad].instruction = .announced(haveSameName(previous, next) ? .continue : .turn)
    if let angle = combinedTurnAngle(sliproad, next) {
      drafts[sliproad].step.maneuver.modifier = RouteStep.Modifier(turnAngle: angle)
    }
    transferLanes(to: sliproad, from: next)
    join(sliproad, next)
  }

  /// OSRM's `buildIntersections` and `removeNoTurnInstructions`: each suppressed step joins the
  /// step before it; an end of road only just turned onto is a turn, or a continue on the same
  /// road (its two-intersection minimum).
  func joined() -> [RouteStep] {
    var result: [RouteStep] = []
    for draft in drafts {
      switch draft.instruction {
      case .none: continue
      case .suppressed:
        if !result.isEmpty { result[result.count - 1].absorb(draft.step) }
      case .waypoint, .announced, .sliproad:
        var step = draft.step
        if case .announced(let kind) = draft.instruction { step.maneuver.kind = kind }
        if draft.instruction == .sliproad { step.maneuver.kind = .turn }
        if step.maneuver.kind == .endOfRoad, let previous = result.last, previous.intersections.count < 2 {
          let sameName =
            !(step.name.isEmpty && step.ref.isEmpty)
            && !RoadNames.requiresNameAnnounced(from: previous.label, to: step.label, suffixes: [])
          step.maneuver.kind = sameName ? .continue : .turn
        }
        result.append(step)
      }
    }
    return result
  }

  // MARK: - Steps

  func hasTurn(_ i: Int) -> Bool {
    switch drafts[i].instruction {
    case .announced, .suppressed, .sliproad: true
    case .waypoint, .none: false
    }
  }

  func next(after i: Int) -> Int {
    var j = i + 1
    while j < drafts.count - 1 && !hasTurn(j) && drafts[j].instruction != .waypoint { j += 1 }
    return min(j, drafts.count - 1)
  }

  func previous(before i: Int) -> Int {
    var j = i - 1
    while j > 0 && !hasTurn(j) && drafts[j].instruction != .waypoint { j -= 1 }
    return max(j, 0)
  }

  func isType(_ i: Int, _ kinds: RouteStep.Kind...) -> Bool {
    guard case .announced(let kind) = drafts[i].instruction else { return false }
    return kinds.contains(kind)
  }

  func isSuppressed(_ i: Int) -> Bool { drafts[i].instruction == .suppressed }
  func modifier(_ i: Int) -> RouteStep.Modifier? { drafts[i].step.maneuver.modifier }
  func length(_ i: Int) -> Double { drafts[i].step.distance }

  static func entersRoundabout(_ draft: Draft) -> Bool {
    guard case .announced(let kind) = draft.instruction else { return false }
    return kind.entersRoundabout || draft.entersAndLeavesRing
  }

  static func hasRoundaboutType(_ draft: Draft) -> Bool {
    guard case .announced(let kind) = draft.instruction else { return false }
    return kind.entersRoundabout || kind.leavesRoundabout
  }

  /// A merged step has no mode left (OSRM's `TRAVEL_MODE_INACCESSIBLE`).
  func haveSameMode(_ a: Int, _ b: Int) -> Bool {
    drafts[a].instruction != .none && drafts[b].instruction != .none && drafts[a].step.isFerry == drafts[b].step.isFerry
  }

  /// OSRM's `haveSameName`, without the profile's suffixes as post-processing reads names.
  func haveSameName(_ a: Int, _ b: Int) -> Bool { drafts[a].step.hasSameName(as: drafts[b].step) }

  func allowedTurns(_ i: Int) -> Int { drafts[i].step.intersections.first?.entry.filter { $0 }.count ?? 0 }

  func noIntermediaryIntersections(_ i: Int) -> Bool {
    drafts[i].step.intersections.dropFirst().allSatisfy { $0.entry.count == 2 }
  }

  func isShortAndUndisturbed(_ i: Int) -> Bool { length(i) <= Self.distance && noIntermediaryIntersections(i) }

  func areSameSide(_ a: Int, _ b: Int) -> Bool {
    let left: Set<RouteStep.Modifier> = [.straight, .slightLeft, .left, .sharpLeft]
    let right: Set<RouteStep.Modifier> = [.straight, .slightRight, .right, .sharpRight]
    guard let x = modifier(a), let y = modifier(b) else { return false }
    return (left.contains(x) && left.contains(y)) || (right.contains(x) && right.contains(y))
  }

  /// The step's turn at its first intersection: in by one road, out by another.
  func bearings(_ i: Int) -> (entry: Double, exit: Double)? {
    guard let first = drafts[i].step.intersections.first, let arriving = first.arrivingRoad,
      let leaving = first.leavingRoad
    else { return nil }
    return (Geo.reverse(Double(first.bearings[arriving])), Double(first.bearings[leaving]))
  }

  func turnAngle(_ i: Int) -> Double? { bearings(i).map { Geo.angleBetween($0.entry, $0.exit) } }

  // MARK: - Scenarios (collapse_scenario_detection.cpp)

  func noBadUTurnCombination(_ a: Int, _ b: Int) -> Bool {
    let hasUTurn = modifier(a) == .uturn || modifier(b) == .uturn
    let fromNameChangeIntoUTurn = isType(a, .newName) && modifier(b) == .uturn
    let uTurnIntoNameChange = isType(b, .newName) && modifier(a) == .uturn
    return !hasUTurn || fromNameChangeIntoUTurn || uTurnIntoNameChange
  }

  func basicPreconditions(_ a: Int, _ b: Int) -> Bool {
    !Self.hasRoundaboutType(drafts[a]) && !Self.hasRoundaboutType(drafts[b]) && drafts[a].instruction != .waypoint
      && drafts[b].instruction != .waypoint && haveSameMode(a, b) && noBadUTurnCombination(a, b)
  }

  func basicPreconditions(_ a: Int, _ b: Int, _ c: Int) -> Bool {
    let roundabout = [a, b, c].contains { Self.hasRoundaboutType(drafts[$0]) }
    let badUTurn = !noBadUTurnCombination(a, b) && !noBadUTurnCombination(b, c)
    return !roundabout && haveSameMode(a, b) && haveSameMode(b, c) && !badUTurn
  }

  /// A turn and the opposite turn a few metres on: a road that jogs across another.
  func isStaggered(_ prior: Int, _ entering: Int, _ leaving: Int) -> Bool {
    guard !Self.entersRoundabout(drafts[entering]), !Self.entersRoundabout(drafts[leaving]),
      let a = turnAngle(entering), let b = turnAngle(leaving)
    else { return false }
    let isRight = { (angle: Double) in angle > 45 && angle < 135 }
    let isLeft = { (angle: Double) in angle > 225 && angle < 315 }
    let ferry = { (i: Int) in self.drafts[i].step.isFerry }
    let intermediaryModeChange = ferry(prior) == ferry(leaving) && ferry(entering) != ferry(leaving)
    return length(entering) < 3 && ((isLeft(a) && isRight(b)) || (isRight(a) && isLeft(b))) && !intermediaryModeChange
      && ferry(prior) == ferry(entering) && noIntermediaryIntersections(entering)
  }

  func isUTurn(_ prior: Int, _ entering: Int, _ leaving: Int) -> Bool {
    guard basicPreconditions(prior, entering, leaving), isType(entering, .turn, .continue, .endOfRoad),
      let enteringBearings = bearings(entering), let leavingBearings = bearings(leaving),
      Guidance.bearingsAreReversed(enteringBearings.entry, leavingBearings.exit), haveSameName(prior, leaving)
    else { return false }
    let onlyAllowedTurn = allowedTurns(leaving) == 1 && noIntermediaryIntersections(entering)
    return isShortAndUndisturbed(entering) || isLinkRoad(prior, entering, leaving) || onlyAllowedTurn
  }

  func isLinkRoad(_ prior: Int, _ link: Int, _ after: Int) -> Bool {
    length(link) <= 2 * Self.distance && drafts[link].step.name.isEmpty && !drafts[prior].step.name.isEmpty
      && !drafts[after].step.name.isEmpty && noIntermediaryIntersections(link)
  }

  func isNameChangeLike(_ i: Int) -> Bool { isType(i, .newName) || (isType(i, .turn) && modifier(i) == .straight) }

  func isNameOscillation(_ prior: Int, _ entering: Int, _ leaving: Int) -> Bool {
    guard basicPreconditions(prior, entering, leaving) else { return false }
    let unnamed = drafts[leaving].step.label.isEmpty
    let changes = isNameChangeLike(entering) && (isNameChangeLike(leaving) || (isSuppressed(leaving) && unnamed))
    return changes && (drafts[prior].step.label == drafts[leaving].step.label || haveSameName(prior, leaving))
  }

  /// A name change, or a straight turn or continue (OSRM's `is_name_change`).
  func isStraightNameChange(_ i: Int) -> Bool {
    isType(i, .newName) || (isType(i, .turn, .continue) && modifier(i) == .straight)
  }

  func isManeuver(_ i: Int) -> Bool { hasTurn(i) && !isSuppressed(i) }

  func maneuverPrecededByNameChange(_ prior: Int, _ entering: Int, _ leaving: Int) -> Bool {
    basicPreconditions(prior, entering, leaving) && isShortAndUndisturbed(entering) && isStraightNameChange(entering)
      && isManeuver(leaving)
  }

  func maneuverPrecededBySuppressedDirection(_ entering: Int, _ leaving: Int) -> Bool {
    basicPreconditions(entering, leaving) && isShortAndUndisturbed(entering) && allowedTurns(entering) > 1
      && isSuppressed(entering) && modifier(entering) != .straight && isManeuver(leaving)
      && areSameSide(entering, leaving)
  }

  func suppressedStraightBetweenTurns(_ entering: Int, _ center: Int, _ leaving: Int) -> Bool {
    guard basicPreconditions(entering, center, leaving) else { return false }
    let (a, b) = (length(entering), length(center))
    let bothShort = a < 0.8 * Self.distance && b < 0.8 * Self.distance
    let similar = (a < 5 && b < 5) || min(a, b) / max(a, b) > 0.75
    let types =
      isSuppressed(center) && modifier(center) == .straight && isType(entering, .turn, .continue)
      && isType(leaving, .turn, .continue, .onRamp)
    guard bothShort, similar, types, let total = totalTurnAngle(entering, leaving) else { return false }
    return total > Guidance.narrowTurnAngle && total < 360 - Guidance.narrowTurnAngle
  }

  func maneuverSucceededByNameChange(_ entering: Int, _ leaving: Int) -> Bool {
    guard basicPreconditions(entering, leaving) else { return false }
    let close = length(entering) <= 1.5 * Self.distance
    let strongNameChange = isType(leaving, .newName) && modifier(leaving) == .straight && close
    let choicelessNameChange = isType(leaving, .newName) && allowedTurns(leaving) == 1 && close
    return (isShortAndUndisturbed(entering) || strongNameChange || choicelessNameChange)
      && isStraightNameChange(leaving) && isManeuver(entering)
  }

  func maneuverSucceededBySuppressedDirection(_ entering: Int, _ leaving: Int) -> Bool {
    basicPreconditions(entering, leaving) && isShortAndUndisturbed(entering) && isSuppressed(leaving)
      && modifier(leaving) != .straight && isManeuver(entering) && areSameSide(entering, leaving)
  }

  func nameChangeImmediatelyAfterSuppressed(_ entering: Int, _ leaving: Int) -> Bool {
    basicPreconditions(entering, leaving) && length(entering) < 0.25 * Self.distance && isSuppressed(entering)
      && isType(leaving, .newName)
  }

  func closeChoicelessTurnAfterTurn(_ entering: Int, _ leaving: Int) -> Bool {
    basicPreconditions(entering, leaving) && isShortAndUndisturbed(entering) && modifier(entering) != .straight
      && allowedTurns(leaving) == 1 && !isSuppressed(leaving)
  }

  func doubleChoiceless(_ entering: Int, _ leaving: Int) -> Bool {
    guard basicPreconditions(entering, leaving) else { return false }
    let intersections = drafts[entering].step.intersections
    return allowedTurns(leaving) == 1 && intersections.count == 2
      && intersections.last!.entry.filter { $0 }.count == 1 && length(entering) < 1.5 * Self.distance
  }

  func straightTurnFollowedByChoiceless(_ entering: Int, _ leaving: Int) -> Bool {
    basicPreconditions(entering, leaving) && length(entering) <= 2 * Self.distance && isType(entering, .continue, .turn)
      && modifier(entering) == .straight && allowedTurns(leaving) == 1 && noIntermediaryIntersections(entering)
  }

  // MARK: - Combining (collapse_turns.cpp)

  /// From the way into the first step to the way out of the second.
  func totalTurnAngle(_ a: Int, _ b: Int) -> Double? {
    let (entry, exit) = a < b ? (a, b) : (b, a)
    guard let into = bearings(entry), let out = bearings(exit) else { return nil }
    return Geo.angleBetween(into.entry, out.exit)
  }

  /// OSRM's `findTotalTurnAngle`: the two turns as one, unless together they go nearly straight
  /// on, or the first is long and the two turn opposite ways.
  func combinedTurnAngle(_ a: Int, _ b: Int) -> Double? {
    let (entry, exit) = a < b ? (a, b) : (b, a)
    guard let into = bearings(entry), let out = bearings(exit) else { return nil }
    let entryAngle = Geo.angleBetween(into.entry, into.exit)
    let exitAngle = Geo.angleBetween(out.entry, out.exit)
    let total = Geo.angleBetween(into.entry, out.exit)
    if Guidance.deviation(total) < 0.5 * Guidance.narrowTurnAngle { return entryAngle }
    if length(entry) < Self.distance { return total }
    if (entryAngle <= 185 && exitAngle <= 185) || (entryAngle >= 175 && exitAngle >= 175) { return total }
    return entryAngle
  }

  /// OSRM's `AdjustToCombinedTurnStrategy`: the kind and direction of step `at` once step `from`
  /// is said with it.
  mutating func adjustToCombinedTurn(at: Int, from: Int, prior: Int) {
    let kind: RouteStep.Kind? = if case .announced(let kind) = drafts[at].instruction { kind } else { nil }
    let fromKind: RouteStep.Kind? = if case .announced(let kind) = drafts[from].instruction { kind } else { nil }
    let newModifier =
      kind == .fork || kind == .merge
      ? modifier(at) : combinedTurnAngle(at, from).map { RouteStep.Modifier(turnAngle: $0) }
    let sameName = haveSameName(prior, from)
    let (atSuppressed, fromSuppressed) = (isSuppressed(at), isSuppressed(from))
    var instruction = drafts[at].instruction
    if isStraightNameChange(from) || isStraightNameChange(at) || atSuppressed {
      if atSuppressed {
        instruction = newModifier == .straight ? .announced(.newName) : .announced(sameName ? .continue : .turn)
      } else if kind == .newName && fromSuppressed && newModifier != .straight {
        instruction = .announced(.turn)
      } else if kind == .continue && !sameName {
        instruction = .announced(.turn)
      } else if kind == .turn && !fromSuppressed && sameName {
        instruction = .announced(.continue)
      }
    } else if fromKind == .onRamp {
      instruction = .announced(.onRamp)
    } else if kind == .turn && fromKind == .turn && sameName {
      instruction = .announced(.continue)
    } else if kind == .continue && fromKind == .turn && !sameName {
      instruction = .announced(.turn)
    }
    drafts[at].instruction = instruction
    if let newModifier { drafts[at].step.maneuver.modifier = newModifier }
  }

  /// Two steps as one maneuver, said where the first begins and named as the second.
  mutating func combineAdjusted(_ at: Int, _ from: Int, prior: Int) {
    adjustToCombinedTurn(at: at, from: from, prior: prior)
    join(at, from)
  }

  mutating func combine(_ at: Int, _ from: Int, _ instruction: (inout Draft, Draft) -> Void) {
    var first = drafts[at]
    instruction(&first, drafts[from])
    drafts[at] = first
    join(at, from)
  }

  /// Step `from` said as part of step `at`, under its name and signs.
  mutating func join(_ at: Int, _ from: Int) {
    transferSignage(to: at, from: from)
    elongate(at, by: from)
    invalidate(from)
  }

  /// The second step driven through as part of the first, which keeps its name.
  mutating func suppress(_ at: Int, into from: Int) {
    elongate(at, by: from)
    invalidate(from)
  }

  mutating func transferSignage(to at: Int, from: Int) {
    let source = drafts[from].step
    drafts[at].step.adaptSignage(from: source)
    drafts[at].step.rotaryName = source.rotaryName
    drafts[at].step.rotaryPronunciation = source.rotaryPronunciation
  }

  /// OSRM's `TransferLanesStrategy`.
  mutating func transferLanes(to at: Int, from: Int) {
    guard let source = drafts[from].step.intersections.first, !drafts[at].step.intersections.isEmpty else { return }
    drafts[at].step.intersections[0].laneDescription = source.laneDescription
    drafts[at].step.intersections[0].turnLanes = source.turnLanes
  }

  mutating func elongate(_ at: Int, by from: Int) { drafts[at].step.absorb(drafts[from].step) }

  mutating func invalidate(_ i: Int) {
    drafts[i].instruction = .none
    drafts[i].step.distance = 0
    drafts[i].step.duration = 0
    drafts[i].step.weight = 0
    drafts[i].step.geometry = []
    drafts[i].step.intersections = []
    drafts[i].step.name = ""
    drafts[i].step.ref = ""
  }
}
