import FleetCore
import FleetProto
import Foundation
import GRPCCore
import GRPCProtobuf
import Synchronization

/// fleetkit.v1.TripUpdates over gRPC: the trip pushed on every change. A change reaches every
/// watcher of its trip at once, so each stream sends the bytes `PushedTrips` encoded once for
/// all of them; the method is registered with a serializer that writes those bytes as they are.
struct TripUpdatesHandler: RegistrableRPCService {
  let front: GRPCFront
  let pushed = PushedTrips()

  func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
    router.registerHandler(
      forMethod: Fleetkit_V1_TripUpdates.Method.WatchTrip.descriptor,
      deserializer: ProtobufDeserializer<Fleetkit_V1_WatchTripRequest>(),
      serializer: EncodedMessageSerializer(),
      handler: { request, context in
        try await watchTrip(request: try await ServerRequest(stream: request), context: context)
      })
  }

  func watchTrip(request: ServerRequest<Fleetkit_V1_WatchTripRequest>, context: ServerContext) async throws
    -> StreamingServerResponse<EncodedMessage>
  {
    // Authentication, quota and authorization happen once, when the stream opens.
    let opened = try await front.respond(.watchTrip, request) { [rpcs = front.rpcs] r, c throws(FleetError) in
      try rpcs.watchTrip(r, c)
    }
    return StreamingServerResponse(
      accepted: opened.accepted.map { [pushed] contents in
        StreamingServerResponse.Contents(metadata: contents.metadata) { writer in
          let watched = contents.message
          let watch = watched.watch
          defer { watch.stop() }
          do {
            // The client hanging up, or the server shutting down, ends the stream.
            try await withRPCCancellationHandler {
              for try await update in watch.updates {
                try await writer.write(pushed.encoded(update, format: watched.format))
              }
            } onCancelRPC: {
              watch.stop()
            }
          } catch let error as FleetError {
            throw error.rpcError
          }
          return [:]
        }
      })
  }
}

/// A message already encoded, sent as it is.
struct EncodedMessage: Sendable {
  let bytes: [UInt8]
}

struct EncodedMessageSerializer: MessageSerializer {
  func serialize<Bytes: GRPCContiguousBytes>(_ message: EncodedMessage) throws -> Bytes { Bytes(message.bytes) }
}

/// The wire form of the trip states pushed last, shared by the watchers of each trip: the first
/// of them to send an update builds and encodes it, the others find it here. Direct-mapped, so
/// that memory stays bounded whatever the number of trips watched: each slot holds the last
/// update encoded for the keys that fall in it, and a collision only costs an encoding.
final class PushedTrips: Sendable {
  struct Key: Hashable {
    var trip: ResourceName
    var view: TripView
    var sequence: UInt64
    /// Equal updates of one change share it; a later read of the same state does not.
    var readAt: Date?
    var format: PolylineFormat
  }

  /// The slots' count, read without taking their lock.
  let count: Int
  let slots: Mutex<[(key: Key, message: EncodedMessage)?]>

  init(slots count: Int = 4_096) {
    self.count = count
    slots = Mutex(Array(repeating: nil, count: count))
  }

  func encoded(_ update: TripUpdate, format: PolylineFormat) throws -> EncodedMessage {
    let key = Key(
      trip: update.snapshot.trip.name, view: update.snapshot.view, sequence: update.sequence,
      readAt: update.snapshot.progress?.readAt, format: format)
    let slot = Int(UInt(bitPattern: key.hashValue) % UInt(count))
    if let found = slots.withLock({ $0[slot] }), found.key == key { return found.message }
    let message = EncodedMessage(
      bytes: try Maps_Fleetengine_V1_Trip(update.snapshot, format: format).serializedBytes())
    slots.withLock { $0[slot] = (key, message) }
    return message
  }
}
