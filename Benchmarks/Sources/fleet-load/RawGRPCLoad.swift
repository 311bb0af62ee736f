import FleetProto
import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import SwiftProtobuf

/// A lean gRPC client for load generation: unary calls written as HTTP/2 frames straight on
/// SwiftNIO, each simulated vehicle sending its next call from the completion callback of the
/// previous one, on its connection's event loop. It costs far less per call than a full gRPC
/// client, so the machine's cores go to the server being measured.
struct RawGRPCLoad {
  let host: String
  let port: Int
  let authorization: String
  let provider: String
  let vehicles: Int
  let connections: Int
  let rpc: String

  func run(measureFrom: NIODeadline, end: NIODeadline) async throws -> VehicleResult {
    let group = MultiThreadedEventLoopGroup.singleton
    var loads: [ConnectionLoad] = []
    for c in 0..<connections {
      let channel = try await ClientBootstrap(group: group).connect(host: host, port: port).get()
      let multiplexer = try await channel.configureHTTP2Pipeline(mode: .client, inboundStreamInitializer: nil).get()
      let ids = Array(stride(from: c, to: vehicles, by: connections))
      loads.append(
        ConnectionLoad(
          channel: channel, multiplexer: multiplexer, vehicleIDs: ids, call: self, measureFrom: measureFrom, end: end))
    }
    var total = VehicleResult()
    for load in loads {
      let result = try await load.start().get()
      total.latencies += result.latencies
      total.errors += result.errors
      try? await load.channel.close()
    }
    return total
  }

  var path: String {
    rpc == "get" ? "/maps.fleetengine.v1.VehicleService/GetVehicle" : "/maps.fleetengine.v1.VehicleService/UpdateVehicle"
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
      request.vehicle.lastLocation.location.latitude = 43.73 + Double(vehicle % 100 * 100 + step % 100) / 1_000_000
      request.vehicle.lastLocation.location.longitude = 7.42 + Double(vehicle / 100) / 10_000
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
      ":method": "POST", ":scheme": "http", ":path": path, ":authority": "\(host):\(port)",
      "content-type": "application/grpc", "te": "trailers", "authorization": authorization,
    ]
  }
}

/// The vehicles of one connection. Confined to the connection's event loop: every property is
/// touched only from callbacks on that loop, hence `@unchecked Sendable`.
final class ConnectionLoad: @unchecked Sendable {
  let channel: any Channel
  let multiplexer: HTTP2StreamMultiplexer
  let vehicleIDs: [Int]
  let call: RawGRPCLoad
  let measureFrom: NIODeadline
  let end: NIODeadline
  let headers: HPACKHeaders
  var result = VehicleResult()
  var running = 0
  var steps: [Int: Int] = [:]
  let done: EventLoopPromise<VehicleResult>

  init(
    channel: any Channel, multiplexer: HTTP2StreamMultiplexer, vehicleIDs: [Int], call: RawGRPCLoad,
    measureFrom: NIODeadline, end: NIODeadline
  ) {
    self.channel = channel
    self.multiplexer = multiplexer
    self.vehicleIDs = vehicleIDs
    self.call = call
    self.measureFrom = measureFrom
    self.end = end
    self.headers = call.headers
    self.done = channel.eventLoop.makePromise()
  }

  func start() -> EventLoopFuture<VehicleResult> {
    channel.eventLoop.execute {
      self.running = self.vehicleIDs.count
      if self.running == 0 { self.done.succeed(self.result) }
      for id in self.vehicleIDs { self.send(id) }
    }
    return done.futureResult
  }

  func send(_ vehicle: Int) {
    let now = NIODeadline.now()
    guard now < end else {
      running -= 1
      if running == 0 { done.succeed(result) }
      return
    }
    let step = steps[vehicle, default: 0] + 1
    steps[vehicle] = step
    guard let body = try? call.body(vehicle: vehicle, step: step) else { return }
    let headers = self.headers
    multiplexer.createStreamChannel(promise: nil) { stream in
      stream.pipeline.addHandler(
        UnaryCallHandler(headers: headers, body: body) { ok in
          self.finished(vehicle, sent: now, ok: ok)
        })
    }
  }

  func finished(_ vehicle: Int, sent: NIODeadline, ok: Bool) {
    let now = NIODeadline.now()
    if sent >= measureFrom && now <= end {
      if ok {
        result.latencies.append(.nanoseconds((now - sent).nanoseconds))
      } else {
        result.errors += 1
      }
    }
    send(vehicle)
  }
}

/// One unary call on its own HTTP/2 stream: headers and message out, status from the trailers.
final class UnaryCallHandler: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = HTTP2Frame.FramePayload
  typealias OutboundOut = HTTP2Frame.FramePayload

  let headers: HPACKHeaders
  let body: ByteBuffer
  let completion: (Bool) -> Void
  var status: String?
  var completed = false

  init(headers: HPACKHeaders, body: ByteBuffer, completion: @escaping (Bool) -> Void) {
    self.headers = headers
    self.body = body
    self.completion = completion
  }

  func handlerAdded(context: ChannelHandlerContext) {
    if context.channel.isActive { start(context) }
  }

  func channelActive(context: ChannelHandlerContext) {
    start(context)
    context.fireChannelActive()
  }

  func start(_ context: ChannelHandlerContext) {
    context.write(wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
    context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: nil)
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch unwrapInboundIn(data) {
    case .headers(let frame):
      if let value = frame.headers.first(name: "grpc-status") { status = value }
      if frame.endStream { complete(context) }
    case .data(let frame):
      if frame.endStream { complete(context) }
    default:
      break
    }
  }

  func channelInactive(context: ChannelHandlerContext) {
    complete(context)
  }

  func complete(_ context: ChannelHandlerContext) {
    guard !completed else { return }
    completed = true
    // The stream channel closes by itself once both sides have ended the stream.
    completion(status == "0")
  }
}
