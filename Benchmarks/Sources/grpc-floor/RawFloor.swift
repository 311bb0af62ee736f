import ArgumentParser
import FleetProto
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import SwiftProtobuf
import Synchronization

/// `serve`'s services and answers with no gRPC library: one handler per connection reads
/// HTTP/2 frames and writes the answers' frames on the connection's event loop, with no task,
/// no child channel and no async sequence per call. The same wire (gRPC's length-prefixed
/// messages, `grpc-status` trailers), so `metro` drives either server. What a transport that
/// skips grpc-swift's layers could cost: the bound below `serve` that fleetd's hot calls could
/// approach (docs/benchmarks.md).
struct ServeRaw: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "serve-raw", abstract: "The same do-nothing services as `serve`, on HTTP/2 frames directly.")

  @Option(help: "gRPC port to listen on (loopback).")
  var grpcPort = 50171

  func run() async throws {
    let watchers = RawWatchers()
    // grpc-swift's server defaults: a 64 KiB window, no limit on concurrent streams.
    let settings: HTTP2Settings = [
      HTTP2Setting(parameter: .maxConcurrentStreams, value: 1 << 20),
      HTTP2Setting(parameter: .initialWindowSize, value: (1 << 16) - 1),
      HTTP2Setting(parameter: .maxFrameSize, value: 1 << 14),
    ]
    let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .serverChannelOption(.backlog, value: 256)
      .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
      .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
      .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          try channel.pipeline.syncOperations.addHandlers([
            NIOHTTP2Handler(mode: .server, initialSettings: settings),
            RawGRPCConnection(watchers: watchers, loop: channel.eventLoop),
          ])
        }
      }
      .bind(host: "127.0.0.1", port: grpcPort).get()
    try await channel.closeFuture.get()
  }
}

/// Streams watching each vehicle's trip, by the connection they are on, so that one report
/// message's pushes reach each connection in one hop and one flush.
final class RawWatchers: Sendable {
  struct Watcher {
    let connection: RawGRPCConnection
    let stream: HTTP2StreamID
    let trip: String
    let vehicleID: String
  }

  let byVehicle = Mutex<[String: [UInt64: Watcher]]>([:])
  let nextID = Atomic<UInt64>(0)

  func add(_ vehicle: String, _ watcher: Watcher) -> UInt64 {
    let id = nextID.add(1, ordering: .relaxed).newValue
    byVehicle.withLock { $0[vehicle, default: [:]][id] = watcher }
    return id
  }

  func remove(_ vehicle: String, _ id: UInt64) {
    byVehicle.withLock { $0[vehicle]?[id] = nil }
  }

  /// Pushes each report's position to its vehicle's watchers.
  func push(_ reports: [(vehicle: String, location: Maps_Fleetengine_V1_VehicleLocation)]) {
    var byConnection: [ObjectIdentifier: (RawGRPCConnection, [RawGRPCConnection.Push])] = [:]
    byVehicle.withLock { all in
      for report in reports {
        guard let watching = all[report.vehicle] else { continue }
        for watcher in watching.values {
          byConnection[ObjectIdentifier(watcher.connection), default: (watcher.connection, [])].1.append(
            .init(stream: watcher.stream, trip: watcher.trip, vehicleID: watcher.vehicleID, location: report.location))
        }
      }
    }
    for (connection, pushes) in byConnection.values { connection.deliver(pushes) }
  }
}

/// One connection's gRPC calls, as HTTP/2 frames. Confined to the connection's event loop
/// (every property is touched from handler callbacks or from work submitted to that loop), hence
/// `@unchecked Sendable`.
final class RawGRPCConnection: ChannelInboundHandler, @unchecked Sendable {
  typealias InboundIn = HTTP2Frame
  typealias OutboundOut = HTTP2Frame

  enum Method {
    case getVehicle, updateVehicle, searchVehicles, reportLocations, watchTrip
    case other(String)

    init(path: String) {
      switch path {
      case "/maps.fleetengine.v1.VehicleService/GetVehicle": self = .getVehicle
      case "/maps.fleetengine.v1.VehicleService/UpdateVehicle": self = .updateVehicle
      case "/maps.fleetengine.v1.VehicleService/SearchVehicles": self = .searchVehicles
      case "/fleetkit.v1.VehicleUpdates/ReportLocations": self = .reportLocations
      case "/fleetkit.v1.TripUpdates/WatchTrip": self = .watchTrip
      default: self = .other(path)
      }
    }
  }

  struct Stream {
    let method: Method
    /// Bytes of a message not yet whole.
    var pending = ByteBuffer()
    /// The response's headers went out.
    var answering = false
    /// Bytes read and not yet returned to the stream's flow-control window.
    var unreturned = 0
    var firstMessage = true
    /// For a WatchTrip stream: its entry in the watchers.
    var watching: (vehicle: String, id: UInt64)?
  }

  struct Push {
    let stream: HTTP2StreamID
    let trip: String
    let vehicleID: String
    let location: Maps_Fleetengine_V1_VehicleLocation
  }

  static let responseHeaders: HPACKHeaders = [":status": "200", "content-type": "application/grpc"]

  let watchers: RawWatchers
  let loop: any EventLoop
  var context: ChannelHandlerContext?
  var streams: [HTTP2StreamID: Stream] = [:]
  /// Bytes read and not yet returned to the connection's flow-control window.
  var unreturned = 0

  init(watchers: RawWatchers, loop: any EventLoop) {
    self.watchers = watchers
    self.loop = loop
  }

  func handlerAdded(context: ChannelHandlerContext) { self.context = context }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    let frame = unwrapInboundIn(data)
    let id = frame.streamID
    switch frame.payload {
    case .headers(let headers):
      if streams[id] == nil {
        streams[id] = Stream(method: Method(path: headers.headers.first(name: ":path") ?? ""))
      }
      if headers.endStream { endOfRequest(id) }
    case .data(let payload):
      guard case .byteBuffer(var bytes) = payload.data else { return }
      unreturned += bytes.readableBytes
      guard streams[id] != nil else { return }
      streams[id]!.unreturned += bytes.readableBytes
      streams[id]!.pending.writeBuffer(&bytes)
      while let message = nextMessage(id) { handle(message, on: id) }
      if payload.endStream { endOfRequest(id) }
    case .rstStream:
      forget(id)
    default:
      break
    }
  }

  func channelReadComplete(context: ChannelHandlerContext) {
    // Give the windows back once a quarter of them is used, as a gRPC peer does.
    if unreturned > 16_384 {
      write(.rootStream, .windowUpdate(windowSizeIncrement: unreturned))
      unreturned = 0
    }
    for (id, stream) in streams where stream.unreturned > 16_384 {
      write(id, .windowUpdate(windowSizeIncrement: stream.unreturned))
      streams[id]!.unreturned = 0
    }
    context.flush()
  }

  func channelInactive(context: ChannelHandlerContext) {
    for id in Array(streams.keys) { forget(id) }
    self.context = nil
  }

  /// The next whole length-prefixed message on stream `id`, if one has arrived.
  func nextMessage(_ id: HTTP2StreamID) -> [UInt8]? {
    guard let pending = streams[id]?.pending, pending.readableBytes >= 5,
      let length = pending.getInteger(at: pending.readerIndex + 1, as: UInt32.self),
      pending.readableBytes >= 5 + Int(length)
    else { return nil }
    streams[id]!.pending.moveReaderIndex(forwardBy: 5)
    return streams[id]!.pending.readBytes(length: Int(length))
  }

  func handle(_ message: [UInt8], on id: HTTP2StreamID) {
    guard let stream = streams[id] else { return }
    do {
      switch stream.method {
      case .getVehicle:
        let request = try Maps_Fleetengine_V1_GetVehicleRequest(serializedBytes: message)
        var vehicle = FloorVehicleService.vehicle
        vehicle.name = request.name
        try answerUnary(id, vehicle)
      case .updateVehicle:
        let request = try Maps_Fleetengine_V1_UpdateVehicleRequest(serializedBytes: message)
        var vehicle = FloorVehicleService.vehicle
        vehicle.name = request.name
        vehicle.lastLocation = request.vehicle.lastLocation
        try answerUnary(id, vehicle)
      case .searchVehicles:
        let request = try Maps_Fleetengine_V1_SearchVehiclesRequest(serializedBytes: message)
        try answerUnary(id, FloorVehicleService.matches(request))
      case .reportLocations:
        let request = try Fleetkit_V1_ReportLocationsRequest(serializedBytes: message)
        var answer = Fleetkit_V1_ReportLocationsResponse()
        if stream.firstMessage { answer.window = 64 }
        streams[id]!.firstMessage = false
        var pushes: [(vehicle: String, location: Maps_Fleetengine_V1_VehicleLocation)] = []
        pushes.reserveCapacity(request.reports.count)
        for report in request.reports {
          var acknowledgement = Fleetkit_V1_Acknowledgement()
          acknowledgement.sequence = report.sequence
          if request.returnVehicles { acknowledgement.vehicle = FloorMessages.acknowledgedVehicle }
          answer.acknowledged.append(acknowledgement)
          pushes.append((report.name, report.vehicle.lastLocation))
        }
        try send(id, answer)
        watchers.push(pushes)
      case .watchTrip:
        let request = try Fleetkit_V1_WatchTripRequest(serializedBytes: message)
        let vehicle = request.name.replacingOccurrences(of: "/trips/", with: "/vehicles/")
        let vehicleID = String(vehicle.split(separator: "/").last ?? "")
        let watcher = RawWatchers.Watcher(connection: self, stream: id, trip: request.name, vehicleID: vehicleID)
        streams[id]!.watching = (vehicle, watchers.add(vehicle, watcher))
        try send(
          id,
          FloorMessages.push(trip: request.name, vehicle: vehicleID, location: Maps_Fleetengine_V1_VehicleLocation()))
      case .other(let path):
        end(id, status: "12", message: "grpc-floor serve-raw does not serve \(path)")
      }
    } catch {
      end(id, status: "3", message: "the request message does not decode: \(error)")
    }
  }

  /// The client has sent its last message: a stream still open is ended with OK.
  func endOfRequest(_ id: HTTP2StreamID) {
    guard let stream = streams[id] else { return }
    if case .watchTrip = stream.method { return }
    end(id, status: "0", message: nil)
  }

  /// Pushes to this connection's watchers, from any thread: one hop to its loop, one flush.
  func deliver(_ pushes: [Push]) {
    loop.execute {
      guard let context = self.context else { return }
      for push in pushes where self.streams[push.stream] != nil {
        try? self.send(
          push.stream, FloorMessages.push(trip: push.trip, vehicle: push.vehicleID, location: push.location))
      }
      context.flush()
    }
  }

  func answerUnary(_ id: HTTP2StreamID, _ message: some SwiftProtobuf.Message) throws {
    try send(id, message)
    end(id, status: "0", message: nil)
  }

  /// One message on stream `id`, after the response's headers if they have not gone out yet.
  func send(_ id: HTTP2StreamID, _ message: some SwiftProtobuf.Message) throws {
    guard let context, streams[id] != nil else { return }
    let bytes: [UInt8] = try message.serializedBytes()
    if !streams[id]!.answering {
      streams[id]!.answering = true
      write(id, .headers(.init(headers: Self.responseHeaders)))
    }
    var buffer = context.channel.allocator.buffer(capacity: 5 + bytes.count)
    buffer.writeInteger(UInt8(0))
    buffer.writeInteger(UInt32(bytes.count))
    buffer.writeBytes(bytes)
    write(id, .data(.init(data: .byteBuffer(buffer))))
  }

  /// Ends stream `id` with trailers (headers and trailers together when nothing was sent).
  func end(_ id: HTTP2StreamID, status: String, message: String?) {
    guard let stream = streams[id] else { return }
    var trailers: HPACKHeaders = stream.answering ? [:] : Self.responseHeaders
    trailers.add(name: "grpc-status", value: status)
    if let message { trailers.add(name: "grpc-message", value: message) }
    write(id, .headers(.init(headers: trailers, endStream: true)))
    forget(id)
  }

  func forget(_ id: HTTP2StreamID) {
    guard let stream = streams.removeValue(forKey: id) else { return }
    if let watching = stream.watching { watchers.remove(watching.vehicle, watching.id) }
  }

  func write(_ id: HTTP2StreamID, _ payload: HTTP2Frame.FramePayload) {
    context?.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: payload)), promise: nil)
  }
}
