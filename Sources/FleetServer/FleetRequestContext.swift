import Hummingbird
import NIOCore

/// fleetd's HTTP request context: Hummingbird's, and the connection, so that a request that
/// must not be read further (a body far over the limit) can close it.
struct FleetRequestContext: RequestContext {
  var coreContext: CoreRequestContextStorage
  let channel: any Channel

  init(source: ApplicationRequestContextSource) {
    coreContext = .init(source: source)
    channel = source.channel
  }
}
