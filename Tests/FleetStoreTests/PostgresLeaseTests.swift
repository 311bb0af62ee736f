import FleetCore
import FleetStorePostgres
import FleetTestSupport
import Foundation
import Synchronization
import Testing

/// The leases instances take on PostgreSQL (dispatch, webhooks): one leader at a time, another
/// takes over when it goes, and a leader whose connection stops answering neither keeps the
/// lease nor hangs.
@Suite("Leases on PostgreSQL")
struct PostgresLeaseTests {
  /// Who leads now, as each instance's body sees it, and whether two ever led at once.
  final class Leaders: Sendable {
    struct State {
      var leading: Set<Int> = []
      var mostAtOnce = 0
    }

    let state = Mutex(State())

    var leading: Set<Int> { state.withLock { $0.leading } }
    var mostAtOnce: Int { state.withLock { $0.mostAtOnce } }

    /// Leads until cancelled.
    func lead(as id: Int) async {
      state.withLock {
        $0.leading.insert(id)
        $0.mostAtOnce = max($0.mostAtOnce, $0.leading.count)
      }
      while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(20)) }
      _ = state.withLock { $0.leading.remove(id) }
    }
  }

  static let probe: Duration = .milliseconds(200)

  /// `count` instances (stores) on the database at `url`.
  func instances(_ count: Int, on url: String) async throws -> [PostgresStore] {
    var stores: [PostgresStore] = []
    for _ in 0..<count { stores.append(try await PostgresStore.connect(try PostgresAddress(url))) }
    return stores
  }

  func contend(_ stores: [PostgresStore], _ leaders: Leaders) -> [Task<Void, Never>] {
    stores.enumerated().map { id, store in
      Task { await store.dispatchLease.whileLeading(probe: Self.probe) { await leaders.lead(as: id) } }
    }
  }

  /// Waits (at most a minute, however slow the machine) until `done`.
  func eventually(_ done: () -> Bool) async throws {
    for _ in 0..<3000 where !done() { try await Task.sleep(for: .milliseconds(20)) }
  }

  @Test(.timeLimit(.minutes(2)))
  func oneInstanceLeadsAtATimeAndAnotherTakesOverWhenItStops() async throws {
    let stores = try await instances(3, on: try await PostgresCluster.start().newDatabase())
    let leaders = Leaders()
    let tasks = contend(stores, leaders)
    try await eventually { leaders.leading.count == 1 }
    let first = try #require(leaders.leading.first)
    tasks[first].cancel()
    await tasks[first].value
    try await eventually { leaders.leading.count == 1 && !leaders.leading.contains(first) }
    #expect(leaders.leading.count == 1)
    #expect(!leaders.leading.contains(first))
    #expect(leaders.mostAtOnce == 1)
    for task in tasks { task.cancel() }
    for task in tasks { await task.value }
    for store in stores { await store.close() }
  }

  @Test(.timeLimit(.minutes(2)))
  func aLeaderWhoseConnectionStopsAnsweringGivesTheLeaseUpAndStillStops() async throws {
    // A cluster of its own: one of its server processes is stopped for a while.
    let cluster = try await PostgresCluster.startPrivate()
    let stores = try await instances(2, on: try await cluster.newDatabase())
    let leaders = Leaders()
    let tasks = contend(stores, leaders)
    try await eventually { leaders.leading.count == 1 }
    let leader = try #require(leaders.leading.first)
    // The leader's session: stopped, it keeps its connection and its lock, and answers nothing,
    // as a server behind a network that went dead would.
    let backend = try #require(
      Int32(try await cluster.psql("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted")))
    #expect(kill(backend, SIGSTOP) == 0)
    var resumed = false
    defer { if !resumed { kill(backend, SIGCONT) } }
    // Its probe gets no answer: it stops leading. Nobody else can lead while the lock is held.
    try await eventually { leaders.leading.isEmpty }
    #expect(leaders.leading.isEmpty)
    // It goes on trying for a while (the outage lasts), and stops when cancelled: no query is
    // left waiting on the dead connection for a later try to queue behind.
    try await Task.sleep(for: Self.probe * 15)
    tasks[leader].cancel()
    await tasks[leader].value
    // The session, resumed, finds its connection closed and ends, freeing the lock.
    kill(backend, SIGCONT)
    resumed = true
    try await eventually { leaders.leading == [1 - leader] }
    #expect(leaders.leading == [1 - leader])
    #expect(leaders.mostAtOnce == 1)
    for task in tasks { task.cancel() }
    for task in tasks { await task.value }
    for store in stores { await store.close() }
  }
}
