/// A call that must not wait for ever on a peer that went away without a word (a PostgreSQL
/// connection the server dropped, a store closing at shutdown).
public enum TimeLimit {
  /// `body`'s result, or `timeout()` thrown after `limit`. The abandoned call is cancelled and
  /// left to finish on its own: unstructured on purpose, as a task group would wait for it.
  public static func run<T: Sendable>(
    _ limit: Duration, _ timeout: @autoclosure @escaping @Sendable () -> any Error,
    _ body: @escaping @Sendable () async throws -> T
  ) async throws -> T {
    // Unbounded: whichever answer comes first is the one read.
    let (outcome, report) = AsyncStream.makeStream(of: Result<T, any Error>.self)
    let work = Task {
      do { report.yield(.success(try await body())) } catch { report.yield(.failure(error)) }
    }
    let timer = Task {
      try? await Task.sleep(for: limit)
      report.yield(.failure(timeout()))
    }
    defer { timer.cancel() }
    for await result in outcome {
      if case .failure = result { work.cancel() }
      return try result.get()
    }
    throw CancellationError()
  }
}
