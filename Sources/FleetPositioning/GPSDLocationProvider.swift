import FleetGeometry
import Foundation
import NIOCore
import NIOPosix

/// Fixes from gpsd, the usual location daemon on Linux, over its JSON protocol on TCP: the
/// client sends `?WATCH={"enable":true,"json":true}` and reads one JSON object per line; each
/// TPV (time-position-velocity) report with a 2D or 3D fix becomes a fix. When the daemon goes
/// away the provider reconnects, waiting longer each time (up to `maximumRetryDelay`).
public struct GPSDLocationProvider: LocationProvider {
  public var host: String
  public var port: Int
  public var maximumRetryDelay: Duration
  let clock: PositioningClock

  public init(
    host: String = "127.0.0.1", port: Int = 2947, maximumRetryDelay: Duration = .seconds(30),
    clock: PositioningClock = .system
  ) {
    self.host = host
    self.port = port
    self.maximumRetryDelay = maximumRetryDelay
    self.clock = clock
  }

  public func fixes() -> AsyncThrowingStream<LocationFix, any Error> {
    let (stream, continuation) = AsyncThrowingStream.makeStream(
      of: LocationFix.self, bufferingPolicy: .bufferingNewest(64))
    let reader = Task { [self] in
      var delay = Duration.milliseconds(250)
      while !Task.isCancelled {
        do {
          try await readSession { fix in continuation.yield(fix) }
          delay = .milliseconds(250)
        } catch is CancellationError {
          break
        } catch {
          // The daemon is down or restarting: try again later.
        }
        do { try await clock.sleep(delay) } catch { break }
        delay = min(delay * 2, maximumRetryDelay)
      }
      continuation.finish()
    }
    // The reader belongs to this stream alone: it ends when the consumer stops listening.
    continuation.onTermination = { _ in reader.cancel() }
    return stream
  }

  /// One connection: watch, then read reports until the daemon closes it.
  func readSession(_ deliver: (LocationFix) -> Void) async throws {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .connect(host: host, port: port) { channel in
        channel.eventLoop.makeCompletedFuture {
          try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
        }
      }
    try await channel.executeThenClose { inbound, outbound in
      try await outbound.write(ByteBuffer(string: "?WATCH={\"enable\":true,\"json\":true};\n"))
      var pending = ByteBuffer()
      for try await var chunk in inbound {
        pending.writeBuffer(&chunk)
        while let newline = pending.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
          let length = newline - pending.readerIndex
          let line = pending.readBytes(length: length) ?? []
          pending.moveReaderIndex(forwardBy: 1)
          if let fix = Self.fix(fromReport: line) { deliver(fix) }
        }
        pending.discardReadBytes()
      }
    }
  }

  /// A TPV report as a fix; nil for other reports and for TPV without a position fix.
  static func fix(fromReport line: [UInt8]) -> LocationFix? {
    guard let report = try? JSONDecoder().decode(TPV.self, from: Data(line)), report.class == "TPV",
      (report.mode ?? 0) >= 2, let lat = report.lat, let lon = report.lon,
      let time = report.time.flatMap(Timestamps.parse)
    else { return nil }
    let coordinate = LatLng(latitude: lat, longitude: lon)
    guard coordinate.isOnGlobe else { return nil }
    // gpsd's eph is its horizontal error estimate; older versions give only epx/epy.
    let horizontal = report.eph ?? report.epx.flatMap { x in report.epy.map { max(x, $0) } }
    return LocationFix(
      coordinate: coordinate, horizontalAccuracy: horizontal, altitude: report.altHAE ?? report.alt,
      verticalAccuracy: report.epv, heading: report.track, headingAccuracy: report.epd, speed: report.speed,
      speedAccuracy: report.eps, time: time, sensor: .gps)
  }

  struct TPV: Decodable {
    var `class`: String
    var mode: Int?
    var time: String?
    var lat: Double?
    var lon: Double?
    var alt: Double?
    var altHAE: Double?
    var track: Double?
    var speed: Double?
    var eph: Double?
    var epx: Double?
    var epy: Double?
    var epv: Double?
    var epd: Double?
    var eps: Double?
  }
}
