import FleetClient

extension FleetClientError {
  /// Errors of the network or the server's load: the Driver SDK retries the update with
  /// backoff, and keeps its position for the backlog.
  public var isTransient: Bool {
    [.unavailable, .deadlineExceeded, .aborted, .cancelled, .resourceExhausted, .internalError, .unknown].contains(code)
  }
}
