import FleetCore
import Testing

@Suite("Trip lifecycle")
struct TripLifecycleTests {
  typealias L = TripLifecycle

  static let forward: [(TripStatus, TripStatus)] = [
    (.new, .enrouteToPickup), (.enrouteToPickup, .arrivedAtPickup), (.arrivedAtPickup, .enrouteToDropoff),
    (.enrouteToDropoff, .complete), (.new, .enrouteToDropoff), (.arrivedAtPickup, .complete),
  ]

  @Test("moves forward", arguments: forward)
  func movesForward(from: TripStatus, to: TripStatus) throws {
    let next = try L(status: from).moving(to: L(status: to), intermediateCount: 0, isAssigned: true)
    #expect(next.status == to)
  }

  @Test("never moves back", arguments: forward.map { ($0.1, $0.0) })
  func neverMovesBack(from: TripStatus, to: TripStatus) {
    #expect(throws: FleetError.self) {
      try L(status: from).moving(to: L(status: to), intermediateCount: 0, isAssigned: true)
    }
  }

  @Test(
    "cancels from any non-terminal state",
    arguments: [TripStatus.new, .enrouteToPickup, .arrivedAtPickup, .enrouteToDropoff])
  func cancels(from: TripStatus) throws {
    #expect(
      try L(status: from).moving(to: L(status: .canceled), intermediateCount: 0, isAssigned: true).status == .canceled)
  }

  @Test("terminal states are final", arguments: [TripStatus.complete, .canceled])
  func terminalIsFinal(from: TripStatus) {
    for to in [TripStatus.new, .enrouteToPickup, .canceled, .complete] where to != from {
      let error = #expect(throws: FleetError.self) {
        try L(status: from).moving(to: L(status: to), intermediateCount: 0, isAssigned: true)
      }
      #expect(error?.code == .failedPrecondition)
    }
  }

  @Test func progressNeedsAVehicle() {
    let error = #expect(throws: FleetError.self) {
      try L(status: .new).moving(to: L(status: .enrouteToPickup), intermediateCount: 0, isAssigned: false)
    }
    #expect(error?.code == .failedPrecondition)
    #expect(error?.message.contains("vehicle") == true)
  }

  @Test func walksIntermediateDestinationsInOrder() throws {
    var l = L(status: .arrivedAtPickup)
    for i: Int32 in 0..<3 {
      l = try l.moving(
        to: L(status: .enrouteToIntermediateDestination, intermediateIndex: i), intermediateCount: 3, isAssigned: true)
      l = try l.moving(
        to: L(status: .arrivedAtIntermediateDestination, intermediateIndex: i), intermediateCount: 3, isAssigned: true)
    }
    l = try l.moving(to: L(status: .enrouteToDropoff), intermediateCount: 3, isAssigned: true)
    #expect(l.status == .enrouteToDropoff)
  }

  @Test func intermediateIndexCannotGoBackOrOutOfRange() {
    let at1 = L(status: .arrivedAtIntermediateDestination, intermediateIndex: 1)
    #expect(throws: FleetError.self) {
      try at1.moving(
        to: L(status: .enrouteToIntermediateDestination, intermediateIndex: 0), intermediateCount: 3, isAssigned: true)
    }
    let error = #expect(throws: FleetError.self) {
      try at1.moving(
        to: L(status: .enrouteToIntermediateDestination, intermediateIndex: 3), intermediateCount: 3, isAssigned: true)
    }
    #expect(error?.code == .invalidArgument)
    #expect(throws: FleetError.self) {
      try L(status: .arrivedAtPickup).moving(
        to: L(status: .enrouteToIntermediateDestination), intermediateCount: 0, isAssigned: true)
    }
  }

  @Test func sameStateIsANoOp() throws {
    #expect(
      try L(status: .enrouteToPickup).moving(to: L(status: .enrouteToPickup), intermediateCount: 0, isAssigned: true)
        .status == .enrouteToPickup)
  }

  @Test func unknownStatusIsRejected() {
    let error = #expect(throws: FleetError.self) {
      try L(status: .new).moving(to: L(status: .unknown), intermediateCount: 0, isAssigned: true)
    }
    #expect(error?.code == .invalidArgument)
  }
}
