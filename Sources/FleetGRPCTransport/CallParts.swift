import GRPCCore
import NIOCore
import NIOHTTP2
import Synchronization

/// A call's inbound parts (a server's request, a client's response) on their way from its
/// connection's loop to the task reading them, and how many bytes of whole messages wait unread.
/// While more than the stream's window waits, the loop holds the stream's flow-control credit
/// back, so that a peer that outpaces its reader is stopped by HTTP/2 instead of filling memory;
/// the reader that brings the backlog under the window asks the loop to give the credit back.
final class InboundParts<Element: Sendable>: AsyncSequence, Sendable {
  let base: AsyncThrowingStream<Element, any Error>
  let input: AsyncThrowingStream<Element, any Error>.Continuation
  /// Bytes of whole messages handed over and not yet read.
  let unread = Atomic<Int>(0)
  /// The loop holds credit back until the reader drains the backlog.
  let paused = Atomic<Bool>(false)
  let window: Int
  /// A part's message bytes (0 for metadata and status).
  let size: @Sendable (Element) -> Int
  /// Runs when a paused stream's backlog falls under the window (from the reader's thread).
  let drained: @Sendable () -> Void

  init(window: Int, size: @escaping @Sendable (Element) -> Int, drained: @escaping @Sendable () -> Void) {
    (base, input) = AsyncThrowingStream.makeStream(of: Element.self)
    self.window = window
    self.size = size
    self.drained = drained
  }

  /// From the loop: a part arrived.
  func yield(_ part: Element) {
    unread.add(size(part), ordering: .relaxed)
    input.yield(part)
  }

  /// From the loop: whether the stream's credit can go back now. When it cannot, the stream is
  /// paused and `drained` runs once the reader catches up (checked again after pausing, so
  /// that a reader that caught up meanwhile is not missed).
  func mayReturnCredit() -> Bool {
    guard unread.load(ordering: .relaxed) >= window else { return true }
    paused.store(true, ordering: .sequentiallyConsistent)
    guard unread.load(ordering: .sequentiallyConsistent) < window else { return false }
    return paused.exchange(false, ordering: .sequentiallyConsistent)
  }

  func finish(throwing error: (any Error)? = nil) { input.finish(throwing: error) }

  func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator(), parts: self) }

  struct Iterator: AsyncIteratorProtocol {
    var base: AsyncThrowingStream<Element, any Error>.Iterator
    let parts: InboundParts

    mutating func next() async throws -> Element? {
      let part = try await base.next()
      if let part, case let bytes = parts.size(part), bytes > 0 {
        let left = parts.unread.subtract(bytes, ordering: .sequentiallyConsistent).newValue
        if left < parts.window, parts.paused.exchange(false, ordering: .sequentiallyConsistent) { parts.drained() }
      }
      return part
    }
  }
}

extension InboundParts where Element == RPCRequestPart<[UInt8]> {
  convenience init(window: Int, drained: @escaping @Sendable () -> Void) {
    self.init(window: window, size: { if case .message(let bytes) = $0 { bytes.count } else { 0 } }, drained: drained)
  }
}

extension InboundParts where Element == RPCResponsePart<[UInt8]> {
  convenience init(window: Int, drained: @escaping @Sendable () -> Void) {
    self.init(window: window, size: { if case .message(let bytes) = $0 { bytes.count } else { 0 } }, drained: drained)
  }
}

/// The side of a connection that writes a call's outbound parts as frames, on its loop.
protocol FrameSink<Part, Handle>: AnyObject, Sendable {
  associatedtype Part: Sendable
  /// What names a call on the connection.
  associatedtype Handle: Sendable
  var loop: any EventLoop { get }
  /// On the loop: `part` of a call, `size` message bytes, given back to `room` once written.
  func send(_ call: Handle, _ part: Part, size: Int, room: WriteRoom)
  /// On the loop: the call's writer finished (`error` nil) or failed.
  func finish(_ call: Handle, _ error: (any Error)?)
}

/// A call's outbound parts on their way to its connection's loop. A writer waits while more
/// than `limit` bytes it wrote are not yet on the socket (the peer reads slowly, or its window
/// is closed), so that a slow reader holds back its own stream's producer (a rider's pushes,
/// which then skip to the newest) instead of filling memory.
struct OutboundParts<Sink: FrameSink>: ClosableRPCWriterProtocol {
  typealias Element = Sink.Part

  let sink: Sink
  let call: Sink.Handle
  let room: WriteRoom
  /// A part's message bytes (0 for metadata and status).
  let size: @Sendable (Element) -> Int

  func write(_ element: Element) async throws {
    let size = size(element)
    try room.take(size)
    let sink = sink
    let call = call
    let room = room
    sink.loop.execute { sink.send(call, element, size: size, room: room) }
    try await room.waitIfFull()
  }

  func write(contentsOf elements: some Sequence<Element>) async throws {
    for element in elements { try await write(element) }
  }

  func finish() async {
    let sink = sink
    let call = call
    sink.loop.execute { sink.finish(call, nil) }
  }

  func finish(throwing error: any Error) async {
    let sink = sink
    let call = call
    sink.loop.execute { sink.finish(call, error) }
  }
}

/// The bytes a stream's writer has in flight, and the writer waiting for room.
final class WriteRoom: Sendable {
  struct State {
    var inFlight = 0
    var waiter: CheckedContinuation<Void, any Error>?
    var closed = false
  }

  let limit: Int
  let state = Mutex(State())

  init(limit: Int) { self.limit = limit }

  /// A write of `size` bytes begins; throws once the stream is gone.
  func take(_ size: Int) throws {
    try state.withLock { s in
      guard !s.closed else { throw RPCError(code: .cancelled, message: "the stream is closed") }
      s.inFlight += size
    }
  }

  func waitIfFull() async throws {
    guard state.withLock({ $0.inFlight > limit && !$0.closed }) else { return }
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
      let ready: Result<Void, any Error>? = state.withLock { s in
        if s.closed { return .failure(RPCError(code: .cancelled, message: "the stream is closed")) }
        guard s.inFlight > limit else { return .success(()) }
        s.waiter = continuation
        return nil
      }
      if let ready { continuation.resume(with: ready) }
    }
  }

  /// From the loop: `size` bytes reached the socket (or were dropped with the stream).
  func written(_ size: Int) {
    let woken: CheckedContinuation<Void, any Error>? = state.withLock { s in
      s.inFlight -= size
      guard s.inFlight <= limit / 2, let waiter = s.waiter else { return nil }
      s.waiter = nil
      return waiter
    }
    woken?.resume()
  }

  /// The stream is gone: a waiting writer and every later write fail.
  func close() {
    let woken: CheckedContinuation<Void, any Error>? = state.withLock { s in
      s.closed = true
      defer { s.waiter = nil }
      return s.waiter
    }
    woken?.resume(throwing: RPCError(code: .cancelled, message: "the stream is closed"))
  }
}

/// A call's cancellation, from its connection to the handle grpc-swift's server gives the call's
/// task (made in that task, where the server's cancellation handlers find it).
final class CallCancellation: Sendable {
  let state = Mutex<(handle: ServerContext.RPCCancellationHandle?, cancelled: Bool)>((nil, false))

  /// From the call's task: its handle, cancelled at once if the call already was.
  func attach(_ handle: ServerContext.RPCCancellationHandle) {
    let cancelled = state.withLock { s in
      s.handle = handle
      return s.cancelled
    }
    if cancelled { handle.cancel() }
  }

  func cancel() {
    let handle = state.withLock { s in
      s.cancelled = true
      return s.handle
    }
    handle?.cancel()
  }
}
