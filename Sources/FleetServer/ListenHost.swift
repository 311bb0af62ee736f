/// The host a process on this machine connects to for a server listening on `host`: a wildcard
/// address as the loopback of its family, and `localhost` as 127.0.0.1, which is how fleetd binds
/// it (`FrameServerTransport`, and the HTTP server); any other host as it is.
public enum ListenHost {
  public static func loopback(_ host: String) -> String {
    switch host {
    case "", "0.0.0.0", "localhost": "127.0.0.1"
    case "::": "::1"
    default: host
    }
  }
}
