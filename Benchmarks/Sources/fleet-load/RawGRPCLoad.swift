import FleetProto
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import SwiftProtobuf

/// A lean gRPC client for load generation: unary calls written as HTTP/2 frames straight on the
/// connection (no child channel per call), each simulated vehicle sending its next call as soon
/// as the previous one's trailers arrive, on its connection's event loop. It costs far less per
/// call than a full gRPC client, so the machine's cores go to the server being measured.
struct RawGRPCLoad {
  let host: String
  /// Connection `c` goes to `ports[c % ports.count]`: each vehicle keeps to one instance.
  let ports: [Int]
  let authorization: String
  let provider: String
  let vehicles: Int
  let connections: Int
  let rpc: String
  /// When set, each vehicle drives its Monaco route instead of wandering a grid.
  let trips: MonacoTrips?

  func run(measureFrom: NIODeadline, end: NIODeadline) async throws -> VehicleResult {
    let group = MultiThreadedEventLoopGroup.singleton
    var loads: [FrameLoad] = []
    for c in 0..<connections {
      let ids = Array(stride(from: c, to: vehicles, by: connections))
      let load = FrameLoad(vehicleIDs: ids, call: self, measureFrom: measureFrom, end: end)
      let channel = try await ClientBootstrap(group: group)
        .channelInitializer { channel in
          channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers([NIOHTTP2Handler(mode: .client), load])
          }
        }
        .connect(host: host, port: ports[c % ports.count]).get()
      load.done = channel.eventLoop.makePromise()
      loads.append(load)
    }
    // Start every connection before waiting on any, so all vehicles run in the same window.
    let started = loads.map { $0.start() }
    var total = VehicleResult()
    for (load, future) in zip(loads, started) {
      let result = try await future.get()
      total.latencies += result.latencies
      total.errors += result.errors
      try? await load.context?.channel.close()
    }
    return total
  }

  var path: String {
    rpc == "get"
      ? "/maps.fleetengine.v1.VehicleService/GetVehicle" : "/maps.fleetengine.v1.VehicleService/UpdateVehicle"
  }

  /// The gRPC message for one call: a 5-byte prefix and the protobuf bytes.
  func body(vehicle: Int, step: Int) throws -> ByteBuffer {
    let bytes: [UInt8]
    let name = "providers/\(provider)/vehicles/load-\(vehicle)"
    if rpc == "get" {
      var request = Maps_Fleetengine_V1_GetVehicleRequest()
      request.name = name
      bytes = try request.serializedBytes()
    } else {
      var request = Maps_Fleetengine_V1_UpdateVehicleRequest()
      request.name = name
      request.updateMask.paths = ["last_location"]
      if let trips {
        let position = trips.position(vehicle: vehicle, step: step)
        request.vehicle.lastLocation.location.latitude = position.latitude
        request.vehicle.lastLocation.location.longitude = position.longitude
      } else {
        request.vehicle.lastLocation.location.latitude = 43.73 + Double(vehicle % 100 * 100 + step % 100) / 1_000_000
        request.vehicle.lastLocation.location.longitude = 7.42 + Double(vehicle / 100) / 10_000
      }
      request.vehicle.lastLocation.updateTime = Google_Protobuf_Timestamp(date: Date())
      bytes = try request.serializedBytes()
    }
    var buffer = ByteBuffer()
    buffer.writeInteger(UInt8(0))
    buffer.writeInteger(UInt32(bytes.count))
    buffer.writeBytes(bytes)
    return buffer
  }

  var headers: HPACKHeaders {
    [
      ":method": "POST", ":scheme": "http", ":path": path, ":authority": host,
      "content-type": "application/grpc", "te": "trailers", "authorization": authorization,
    ]
  }
}

/// The vehicles of one connection, as HTTP/2 frames on it. Confined to the connection's event
/// loop: every property is touched only from handler callbacks or tasks on that loop, hence
/// `@unchecked Sendable`.
final class FrameLoad: ChannelInboundHandler, @unchecked Sendable {
  typealias InboundIn = HTTP2Frame
  typealias OutboundOut = HTTP2Frame

  struct Call {
    let vehicle: Int
    let sent: NIODeadline
    var status: String?
  }

  let vehicleIDs: [Int]
  let call: RawGRPCLoad
  let measureFrom: NIODeadline
  let end: NIODeadline
  let headers: HPACKHeaders
  var context: ChannelHandlerContext?
  var done: EventLoopPromise<VehicleResult>?
  var result = VehicleResult()
  var running = 0
  var steps: [Int: Int] = [:]
  var inFlight: [HTTP2StreamID: Call] = [:]
  var nextStreamID = 1
  /// Response bytes not yet returned to the server's connection-level flow-control window.
  var consumed = 0

  init(vehicleIDs: [Int], call: RawGRPCLoad, measureFrom: NIODeadline, end: NIODeadline) {
    self.vehicleIDs = vehicleIDs
    self.call = call
    self.measureFrom = measureFrom
    self.end = end
    self.headers = call.headers
  }

  func handlerAdded(context: ChannelHandlerContext) { self.context = context }

  func start() -> EventLoopFuture<VehicleResult> {
    let done = self.done!
    done.futureResult.eventLoop.execute {
      self.running = self.vehicleIDs.count
      if self.running == 0 { done.succeed(self.result) }
      for id in self.vehicleIDs { self.send(id) }
      self.context?.flush()
    }
    return done.futureResult
  }

  func send(_ vehicle: Int) {
    let now = NIODeadline.now()
    guard now < end, let context, let body = try? call.body(vehicle: vehicle, step: steps[vehicle, default: 0] + 1)
    else {
      running -= 1
      if running == 0 { done?.succeed(result) }
      return
    }
    steps[vehicle, default: 0] += 1
    let stream = HTTP2StreamID(nextStreamID)
    nextStreamID += 2
    inFlight[stream] = Call(vehicle: vehicle, sent: now)
    context.write(
      wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .headers(.init(headers: headers)))), promise: nil)
    context.write(
      wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .data(.init(data: .byteBuffer(body), endStream: true)))),
      promise: nil)
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    let frame = unwrapInboundIn(data)
    switch frame.payload {
    case .headers(let headers):
      if let status = headers.headers.first(name: "grpc-status") { inFlight[frame.streamID]?.status = status }
      if headers.endStream { finish(frame.streamID) }
    case .data(let data):
      consumed += data.data.readableBytes
      if data.endStream { finish(frame.streamID) }
    case .rstStream:
      finish(frame.streamID)
    default:
      break
    }
  }

  func channelReadComplete(context: ChannelHandlerContext) {
    if consumed > 16_384 {
      context.write(
        wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: consumed))),
        promise: nil)
      consumed = 0
    }
    context.flush()
  }

  func channelInactive(context: ChannelHandlerContext) {
    for stream in Array(inFlight.keys) { finish(stream) }
    if running > 0 {
      running = 0
      done?.succeed(result)
    }
  }

  func finish(_ stream: HTTP2StreamID) {
    guard let call = inFlight.removeValue(forKey: stream) else { return }
    let now = NIODeadline.now()
    if call.sent >= measureFrom && now <= end {
      if call.status == "0" {
        result.latencies.append(.nanoseconds((now - call.sent).nanoseconds))
      } else {
        result.errors += 1
      }
    }
    send(call.vehicle)
  }
}
