import FleetClient

extension FleetClientError {
  /// Errors of the server or the network (Fleet Engine: ABORTED, CANCELLED, DEADLINE_EXCEEDED,
  /// UNAVAILABLE). A trip model recovers from them by itself, with backoff; subscribers are not
  /// told. Everything else (INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED, RESOURCE_EXHAUSTED,
  /// UNAUTHENTICATED, …) is reported, and retried all the same.
  public var isRecoveredAutomatically: Bool {
    [.aborted, .cancelled, .deadlineExceeded, .unavailable].contains(code)
  }
}
