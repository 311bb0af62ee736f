import FleetCore
import FleetGRPCTransport
import FleetProto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle
import SwiftProtobuf

/// Fleet Engine's REST v1 mapping (google.api.http rules of trip_api.proto and vehicle_api.proto),
/// with the proto3 JSON mapping and Google's error body. Every route builds the same request
/// message the gRPC service receives and calls the same `FleetRPCs` function.
struct RESTFront: Sendable {
  let gate: RequestGate
  let rpcs: FleetRPCs
  let intake: ReportIntake
  let maximumRequestBytes: Int
  /// The most location reports one `vehicles:reportLocations` request may carry.
  let maximumReports: Int
  let requestIDs = RequestIDs()

  /// Fleet Engine's REST paths under `/v1/`, FleetKit's own under `/fleetkit/v1/`.
  func addRoutes(to routes: Routes) {
    for prefix in ["/v1/", "/fleetkit/v1/"] {
      routes.addDispatcher(prefix: prefix, methods: RESTRoute.methods) { request, context in
        await self.handle(request, context)
      }
    }
  }

  func handle(_ request: Request, _ context: FleetRequestContext) async -> Response {
    let requestID = request.headers[.init("x-request-id")!] ?? requestIDs.next()
    do {
      // HEAD is GET without the body (the router drops it).
      let route = try RESTRoute(method: request.method == .head ? .get : request.method, path: request.uri.path)
      switch route.target {
      case .watchTrip(let name): return try await watch(name, request, requestID: requestID)
      case .watchRideStatus(let name): return try await watchRideStatus(name, request, requestID: requestID)
      case .watchTaskTrackingInfo(let name): return try await watchTracking(name, request, requestID: requestID)
      case .reportLocations(let parent): return await reportLocations(parent, request, context, requestID: requestID)
      default: break
      }
      let body: Data
      switch await requestBody(request, context, requestID: requestID) {
      case .read(let read): body = read
      case .refused(let refusal): return refusal
      }
      let call = RESTCall(route: route, body: body, query: Self.query(of: request))
      let authorization = request.headers[.authorization]
      let timeout = request.headers[.init("x-server-timeout")!].flatMap(Double.init).map(Self.timeout)
      let json = try await gate.run(
        route.operation, transport: "rest", authorization: authorization, requestID: requestID, timeout: timeout
      ) { [rpcs] caller throws(FleetError) in try await call.perform(rpcs, caller) }
      var headers = HTTPFields()
      headers[.contentType] = "application/json; charset=utf-8"
      headers[.init("x-request-id")!] = requestID
      return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: json)))
    } catch {
      return Self.errorResponse(error, status: error.code.httpStatus, requestID: requestID)
    }
  }

  /// `GET /fleetkit/v1/providers/{p}/trips/{t}:watch`: fleetkit.v1.TripUpdates/WatchTrip as server-sent
  /// events, one `trip` event (the Trip as proto3 JSON) per change, an `error` event (Google's
  /// error body) if the stream fails. Browsers' EventSource cannot send headers, so the token
  /// may also come as `access_token` in the query (RFC 6750).
  func watch(_ name: String, _ request: Request, requestID: String) async throws(FleetError) -> Response {
    let query = Self.query(of: request)
    let token = query.first { $0.0 == "access_token" }.map { "Bearer \($0.1)" }
    let call = RESTCall(
      route: RESTRoute(target: .watchTrip(name)), body: Data(), query: query.filter { $0.0 != "access_token" })
    let watch = try await gate.run(
      .watchTrip, transport: "rest", authorization: request.headers[.authorization] ?? token, requestID: requestID,
      timeout: nil
    ) { [rpcs] caller throws(FleetError) in
      var r: Fleetkit_V1_WatchTripRequest = try call.fromQuery()
      r.name = name
      return try rpcs.watchTrip(r, caller)
    }
    return Self.serverSentEvents(watch.watch, requestID: requestID) { snapshot in
      ("trip", try watch.trip(snapshot).jsonUTF8Data(options: RESTCall.encoding))
    }
  }

  /// `GET /fleetkit/v1/providers/{p}/taskTrackingInfo/{id}:watch`: fleetkit.v1.TaskTracking as
  /// server-sent events, one `taskTrackingInfo` event (TaskTrackingInfo as proto3 JSON) per
  /// change; the token as for `trips/{t}:watch`.
  func watchTracking(_ name: String, _ request: Request, requestID: String) async throws(FleetError) -> Response {
    let query = Self.query(of: request)
    let token = query.first { $0.0 == "access_token" }.map { "Bearer \($0.1)" }
    let watch = try await gate.run(
      .watchTaskTrackingInfo, transport: "rest", authorization: request.headers[.authorization] ?? token,
      requestID: requestID, timeout: nil
    ) { [rpcs] caller throws(FleetError) in
      var r = Maps_Fleetengine_Delivery_V1_GetTaskTrackingInfoRequest()
      r.name = name
      return try rpcs.watchTaskTrackingInfo(r, caller)
    }
    return Self.serverSentEvents(watch.updates, stop: watch.stop, requestID: requestID) { info in
      (
        "taskTrackingInfo",
        try Maps_Fleetengine_Delivery_V1_TaskTrackingInfo(info).jsonUTF8Data(options: RESTCall.encoding)
      )
    }
  }

  /// A trip watch as server-sent events: `event(snapshot)` names each change's event and its
  /// data (nil skips the change); a failure ends the stream with an `error` event (Google's error
  /// body). Graceful shutdown (SIGTERM) and the client going away end the stream.
  static func serverSentEvents(
    _ watch: TripWatch, requestID: String,
    _ event: @escaping @Sendable (TripSnapshot) throws -> (name: String, data: Data)?
  ) -> Response {
    let updates = watch.updates.map { $0.snapshot }
    return serverSentEvents(updates, stop: watch.stop, requestID: requestID, event)
  }

  /// Any watch's updates as server-sent events, as above.
  static func serverSentEvents<Updates: AsyncSequence & Sendable>(
    _ updates: Updates, stop: @escaping @Sendable () -> Void, requestID: String,
    _ event: @escaping @Sendable (Updates.Element) throws -> (name: String, data: Data)?
  ) -> Response {
    var headers = HTTPFields()
    headers[.contentType] = "text/event-stream"
    headers[.cacheControl] = "no-cache"
    headers[.init("x-request-id")!] = requestID
    return Response(
      status: .ok, headers: headers,
      body: ResponseBody { writer in
        defer { stop() }
        do {
          try await withGracefulShutdownHandler {
            try await withTaskCancellationHandler {
              for try await update in updates {
                guard let (name, data) = try event(update) else { continue }
                var buffer = ByteBuffer(string: "event: \(name)\ndata: ")
                buffer.writeBytes(data)
                buffer.writeString("\n\n")
                try await writer.write(buffer)
              }
            } onCancel: {
              stop()
            }
          } onGracefulShutdown: {
            stop()
          }
        } catch let error as FleetError {
          var buffer = ByteBuffer(string: "event: error\ndata: ")
          buffer.writeBytes(errorBody(error, status: error.code.httpStatus))
          buffer.writeString("\n\n")
          try await writer.write(buffer)
        }
        try await writer.finish(nil)
      })
  }

  /// The query's parameters in order, decoded as HTML forms encode them ("+" is a space, as
  /// browsers' URLSearchParams write it, and Google's front ends read it).
  static func query(of request: Request) -> [(String, String)] {
    (request.uri.query ?? "").split(separator: "&").map { pair in
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      func decoded(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
      }
      return (decoded(parts[0]), parts.count > 1 ? decoded(parts[1]) : "")
    }
  }

  /// `X-Server-Timeout` in seconds, bounded to a day so that no value can overflow.
  static func timeout(_ seconds: Double) -> Duration {
    guard seconds.isFinite, seconds > 0 else { return .zero }
    return .milliseconds(Int64(min(seconds, 86_400) * 1000))
  }

  /// Google's error body: {"error":{"code":400,"message":"…","status":"INVALID_ARGUMENT"}}.
  /// A request body over the limit is still read, up to `drainFactor` times the limit, and
  /// dropped: a client that sends its whole body before reading (most do) then gets the 413
  /// at once instead of waiting on a connection nobody reads. Past that the connection is
  /// closed. Either way the 413 says `Connection: close`.
  static let drainFactor = 16

  /// A request's body as its client meant it: read up to the limit and inflated when it came
  /// compressed (`decoded`), or the answer refusing it. A body over the limit is a 413 with
  /// `Connection: close` (the connection closed at once when there was too much to drain).
  func requestBody(_ request: Request, _ context: FleetRequestContext, requestID: String) async -> RequestBody {
    let read: (body: ByteBuffer?, drained: Bool)
    do {
      read = try await Self.body(of: request, upTo: maximumRequestBytes)
    } catch {
      return .refused(
        Self.errorResponse(
          FleetError(.invalidArgument, "the request body could not be read: \(error)"), status: .badRequest,
          requestID: requestID))
    }
    guard let body = read.body else {
      if !read.drained { context.channel.close(promise: nil) }
      var response = Self.errorResponse(
        FleetError(.invalidArgument, "the request body exceeds the limit of \(maximumRequestBytes) bytes"),
        status: .contentTooLarge, requestID: requestID)
      response.headers[.connection] = "close"
      return .refused(response)
    }
    switch Self.decoded(body, coding: request.headers[.contentEncoding], limit: maximumRequestBytes) {
    case .success(let data): return .read(data)
    case .failure(let refusal): return .refused(refusal.response(requestID: requestID))
    }
  }

  enum RequestBody {
    case read(Data)
    case refused(Response)
  }

  /// The body, or nil when it is over `limit` bytes; and whether it was read to its end.
  static func body(of request: Request, upTo limit: Int) async throws -> (body: ByteBuffer?, drained: Bool) {
    var body = ByteBuffer()
    var dropped = 0
    for try await chunk in request.body {
      if dropped == 0 && body.readableBytes + chunk.readableBytes <= limit {
        body.writeImmutableBuffer(chunk)
        continue
      }
      dropped += chunk.readableBytes
      if dropped > limit * drainFactor { return (nil, false) }
    }
    return dropped == 0 ? (body, true) : (nil, true)
  }

  /// A body its coding keeps from being read, and how to say so.
  struct BodyRefusal: Error {
    let error: FleetError
    let status: HTTPResponse.Status

    func response(requestID: String) -> Response {
      var response = RESTFront.errorResponse(error, status: status, requestID: requestID)
      // RFC 9110: a 415 for a content coding names the codings that would have been read.
      if status == .unsupportedMediaType { response.headers[.acceptEncoding] = "gzip, deflate" }
      return response
    }
  }

  /// A request body as its client sent it (`Content-Encoding`: identity, gzip or deflate;
  /// Google's Java API client gzips what it posts unless told not to), inflated to at most
  /// `limit` bytes: 415 for another coding, 413 past the limit, 400 for bytes that do not inflate.
  static func decoded(_ body: ByteBuffer, coding: String?, limit: Int) -> Result<Data, BodyRefusal> {
    // An empty body has nothing to inflate, whatever its headers say.
    guard let coding, !coding.isEmpty, body.readableBytes > 0 else { return .success(Data(buffer: body)) }
    // Content codings are case-insensitive; x-gzip is gzip (RFC 9110, 8.4.1.3).
    let name = coding.trimmingCharacters(in: .whitespaces).lowercased()
    guard let encoding = MessageEncoding(name: name == "x-gzip" ? "gzip" : name) else {
      return .failure(
        BodyRefusal(
          error: FleetError(
            .invalidArgument,
            "Content-Encoding '\(coding)' is not supported: a request body may be gzip, deflate or identity"),
          status: .unsupportedMediaType))
    }
    switch encoding.inflate(Array(buffer: body), limit: limit) {
    case .success(let inflated):
      return .success(Data(inflated))
    case .failure(.tooLong):
      return .failure(
        BodyRefusal(
          error: FleetError(.invalidArgument, "the request body inflates past the limit of \(limit) bytes"),
          status: .contentTooLarge))
    case .failure(.corrupt(let status)):
      return .failure(
        BodyRefusal(
          error: FleetError(.invalidArgument, "the request body is not valid \(name) data (zlib status \(status))"),
          status: .badRequest))
    }
  }

  static func errorBody(_ error: FleetError, status: HTTPResponse.Status) -> Data {
    let body: [String: Any] = ["error": ["code": status.code, "message": error.message, "status": error.code.rawValue]]
    return (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data()
  }

  /// Google's error body for a failed request, with its headers.
  static func errorResponse(_ error: FleetError, status: HTTPResponse.Status, requestID: String) -> Response {
    let data = Self.errorBody(error, status: status)
    var headers = HTTPFields()
    headers[.contentType] = "application/json; charset=utf-8"
    headers[.init("x-request-id")!] = requestID
    if let retryAfter = error.retryAfter {
      let (seconds, atto) = retryAfter.components
      headers[.retryAfter] = "\(seconds + (atto > 0 ? 1 : 0))"
    }
    return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(data: data)))
  }
}

/// Which RPC a method and path name, and the resource names in the path: Fleet Engine's REST
/// mapping under `/v1/`, FleetKit's own calls under `/fleetkit/v1/`.
struct RESTRoute: Sendable {
  enum Target: Sendable {
    case createTrip(parent: String)
    case getTrip(String)
    case updateTrip(String)
    case deleteTrip(String)
    case searchTrips(parent: String)
    case reportBillableTrip(String)
    case createVehicle(parent: String)
    case getVehicle(String)
    case updateVehicle(String)
    case deleteVehicle(String)
    case updateVehicleAttributes(String)
    case listVehicles(parent: String)
    case searchVehicles(parent: String)
    case watchTrip(String)
    case rideStatus(String)
    case watchRideStatus(String)
    case reportLocations(parent: String)
    case createRide(parent: String)
    case getRide(String)
    case listRides(parent: String)
    case cancelRide(String)
    case quoteRide(parent: String)
    case listAreas(parent: String)
    // The Deliveries API (delivery_api.proto).
    case createDeliveryVehicle(parent: String)
    case getDeliveryVehicle(String)
    case updateDeliveryVehicle(String)
    case deleteDeliveryVehicle(String)
    case listDeliveryVehicles(parent: String)
    case createTask(parent: String)
    case batchCreateTasks(parent: String)
    case getTask(String)
    case updateTask(String)
    case deleteTask(String)
    case listTasks(parent: String)
    case getTaskTrackingInfo(String)
    case watchTaskTrackingInfo(String)
    case optimizeStops(String)
  }

  let target: Target

  init(target: Target) { self.target = target }

  /// The RPC `method` names on `path`: NOT_FOUND for a path that is none of fleetd's (a wrong
  /// method on a known path never reaches here: it is answered 405 before).
  init(method: HTTPRequest.Method, path: String) throws(FleetError) {
    guard let target = Self.targets(path: path)[method] else {
      throw .notFound("no such REST resource: \(method.rawValue) \(path)")
    }
    self.target = target
  }

  /// The methods `path` allows; nil when it is none of fleetd's REST paths.
  static func methods(_ path: String) -> [HTTPRequest.Method]? {
    let targets = targets(path: path)
    return targets.isEmpty ? nil : [.get, .post, .put, .patch, .delete].filter { targets[$0] != nil }
  }

  /// Every RPC a path names, by method.
  static func targets(path: String) -> [HTTPRequest.Method: Target] {
    let decoded = path.removingPercentEncoding ?? path
    var parts = decoded.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    let fleetKit: Bool
    if parts.count > 2, parts[0] == "", parts[1] == "v1" {
      fleetKit = false
      parts.removeFirst(2)
    } else if parts.count > 3, parts[0] == "", parts[1] == "fleetkit", parts[2] == "v1" {
      fleetKit = true
      parts.removeFirst(3)
    } else {
      return [:]
    }
    // A custom method rides on the last segment: "trips:search", "v1:updateAttributes".
    var verb = ""
    if let last = parts.last, let colon = last.firstIndex(of: ":") {
      verb = String(last[last.index(after: colon)...])
      parts[parts.count - 1] = String(last[..<colon])
    }
    guard parts.count >= 3, parts[0] == "providers", !parts[1].isEmpty, parts.allSatisfy({ !$0.isEmpty }) else {
      return [:]
    }
    let parent = "providers/\(parts[1])"
    let name = parts.joined(separator: "/")
    switch (fleetKit, parts.count, parts[2], verb) {
    // Fleet Engine's TripService and VehicleService (trip_api.proto, vehicle_api.proto).
    case (false, 3, "trips", ""): return [.post: .createTrip(parent: parent)]
    case (false, 3, "trips", "search"): return [.post: .searchTrips(parent: parent)]
    case (false, 4, "trips", ""): return [.get: .getTrip(name), .put: .updateTrip(name), .delete: .deleteTrip(name)]
    case (false, 4, "billableTrips", "report"): return [.post: .reportBillableTrip(name)]
    case (false, 3, "vehicles", ""):
      return [.post: .createVehicle(parent: parent), .get: .listVehicles(parent: parent)]
    case (false, 3, "vehicles", "search"): return [.post: .searchVehicles(parent: parent)]
    case (false, 4, "vehicles", ""):
      return [.get: .getVehicle(name), .put: .updateVehicle(name), .delete: .deleteVehicle(name)]
    case (false, 4, "vehicles", "updateAttributes"): return [.post: .updateVehicleAttributes(name)]
    // The Deliveries API's DeliveryService (delivery_api.proto); its updates are PATCH.
    case (false, 3, "deliveryVehicles", ""):
      return [.post: .createDeliveryVehicle(parent: parent), .get: .listDeliveryVehicles(parent: parent)]
    case (false, 4, "deliveryVehicles", ""):
      return [
        .get: .getDeliveryVehicle(name), .patch: .updateDeliveryVehicle(name), .delete: .deleteDeliveryVehicle(name),
      ]
    case (false, 3, "tasks", ""): return [.post: .createTask(parent: parent), .get: .listTasks(parent: parent)]
    case (false, 3, "tasks", "batchCreate"): return [.post: .batchCreateTasks(parent: parent)]
    case (false, 4, "tasks", ""): return [.get: .getTask(name), .patch: .updateTask(name), .delete: .deleteTask(name)]
    case (false, 4, "taskTrackingInfo", ""): return [.get: .getTaskTrackingInfo(name)]
    case (true, 4, "taskTrackingInfo", "watch"): return [.get: .watchTaskTrackingInfo(name)]
    case (true, 4, "deliveryVehicles", "optimizeStops"): return [.post: .optimizeStops(name)]
    // FleetKit's own: trip watch, ride status, the location batch, the booking API.
    case (true, 4, "trips", "watch"): return [.get: .watchTrip(name)]
    case (true, 4, "trips", "rideStatus"): return [.get: .rideStatus(name)]
    case (true, 4, "trips", "watchRideStatus"): return [.get: .watchRideStatus(name)]
    case (true, 3, "vehicles", "reportLocations"): return [.post: .reportLocations(parent: parent)]
    case (true, 3, "rides", ""): return [.post: .createRide(parent: parent), .get: .listRides(parent: parent)]
    case (true, 3, "rides", "quote"): return [.post: .quoteRide(parent: parent)]
    case (true, 4, "rides", ""): return [.get: .getRide(name), .delete: .cancelRide(name)]
    case (true, 3, "areas", ""): return [.get: .listAreas(parent: parent)]
    default: return [:]
    }
  }

  var operation: FleetOperation {
    switch target {
    case .createTrip: .createTrip
    case .getTrip: .getTrip
    case .updateTrip: .updateTrip
    case .deleteTrip: .deleteTrip
    case .searchTrips: .searchTrips
    case .reportBillableTrip: .reportBillableTrip
    case .createVehicle: .createVehicle
    case .getVehicle: .getVehicle
    case .updateVehicle: .updateVehicle
    case .deleteVehicle: .deleteVehicle
    case .updateVehicleAttributes: .updateVehicleAttributes
    case .listVehicles: .listVehicles
    case .searchVehicles: .searchVehicles
    case .watchTrip: .watchTrip
    case .rideStatus: .getTrip
    case .watchRideStatus: .watchTrip
    case .reportLocations: .reportLocations
    case .createRide: .createRide
    case .getRide: .getRide
    case .listRides: .listRides
    case .cancelRide: .cancelRide
    case .quoteRide: .quoteRide
    case .listAreas: .listAreas
    case .createDeliveryVehicle: .createDeliveryVehicle
    case .getDeliveryVehicle: .getDeliveryVehicle
    case .updateDeliveryVehicle: .updateDeliveryVehicle
    case .deleteDeliveryVehicle: .deleteDeliveryVehicle
    case .listDeliveryVehicles: .listDeliveryVehicles
    case .createTask: .createTask
    case .batchCreateTasks: .batchCreateTasks
    case .getTask: .getTask
    case .updateTask: .updateTask
    case .deleteTask: .deleteTask
    case .listTasks: .listTasks
    case .getTaskTrackingInfo: .getTaskTrackingInfo
    case .watchTaskTrackingInfo: .watchTaskTrackingInfo
    case .optimizeStops: .optimizeStops
    }
  }
}

/// One REST request turned into the wire request message and back into JSON.
struct RESTCall: Sendable {
  let route: RESTRoute
  let body: Data
  let query: [(String, String)]

  static let decoding = JSONDecodingOptions()
  static let encoding = JSONEncodingOptions()

  func perform(_ rpcs: FleetRPCs, _ caller: Caller) async throws(FleetError) -> Data {
    switch route.target {
    case .createTrip(let parent):
      var r = Maps_Fleetengine_V1_CreateTripRequest()
      r.parent = parent
      r.tripID = queryValue("tripId", "trip_id")
      r.trip = try decodeBody(Maps_Fleetengine_V1_Trip.self, required: true)
      return try encode(try await rpcs.createTrip(r, caller))
    case .getTrip(let name):
      var r: Maps_Fleetengine_V1_GetTripRequest = try fromQuery()
      r.name = name
      return try encode(try rpcs.getTrip(r, caller))
    case .updateTrip(let name):
      var r = Maps_Fleetengine_V1_UpdateTripRequest()
      r.name = name
      r.trip = try decodeBody(Maps_Fleetengine_V1_Trip.self, required: true)
      r.updateMask.paths = updateMask()
      return try encode(try await rpcs.updateTrip(r, caller))
    case .deleteTrip(let name):
      var r = Maps_Fleetengine_V1_DeleteTripRequest()
      r.name = name
      return try encode(try await rpcs.deleteTrip(r, caller))
    case .searchTrips(let parent):
      var r = try decodeBody(Maps_Fleetengine_V1_SearchTripsRequest.self)
      r.parent = parent
      return try encode(try rpcs.searchTrips(r, caller))
    case .reportBillableTrip(let name):
      var r = try decodeBody(Maps_Fleetengine_V1_ReportBillableTripRequest.self)
      r.name = name
      return try encode(try await rpcs.reportBillableTrip(r, caller))
    case .createVehicle(let parent):
      var r = Maps_Fleetengine_V1_CreateVehicleRequest()
      r.parent = parent
      r.vehicleID = queryValue("vehicleId", "vehicle_id")
      r.vehicle = try decodeBody(Maps_Fleetengine_V1_Vehicle.self, required: true)
      return try encode(try await rpcs.createVehicle(r, caller))
    case .getVehicle(let name):
      var r: Maps_Fleetengine_V1_GetVehicleRequest = try fromQuery()
      r.name = name
      return try encode(try rpcs.getVehicle(r, caller))
    case .updateVehicle(let name):
      var r = Maps_Fleetengine_V1_UpdateVehicleRequest()
      r.name = name
      r.vehicle = try decodeBody(Maps_Fleetengine_V1_Vehicle.self, required: true)
      r.updateMask.paths = updateMask()
      return try encode(try await rpcs.updateVehicle(r, caller))
    case .deleteVehicle(let name):
      var r = Maps_Fleetengine_V1_DeleteVehicleRequest()
      r.name = name
      return try encode(try await rpcs.deleteVehicle(r, caller))
    case .updateVehicleAttributes(let name):
      var r = try decodeBody(Maps_Fleetengine_V1_UpdateVehicleAttributesRequest.self)
      r.name = name
      return try encode(try await rpcs.updateVehicleAttributes(r, caller))
    case .listVehicles(let parent):
      var r: Maps_Fleetengine_V1_ListVehiclesRequest = try fromQuery(
        repeated: [
          "tripTypes", "trip_types", "vehicleTypeCategories", "vehicle_type_categories", "requiredAttributes",
          "required_attributes", "requiredOneOfAttributes", "required_one_of_attributes",
          "requiredOneOfAttributeSets", "required_one_of_attribute_sets",
        ])
      r.parent = parent
      return try encode(try await rpcs.listVehicles(r, caller))
    case .searchVehicles(let parent):
      var r = try decodeBody(Maps_Fleetengine_V1_SearchVehiclesRequest.self)
      r.parent = parent
      return try encode(try await rpcs.searchVehicles(r, caller))
    case .createDeliveryVehicle(let parent):
      var r = Maps_Fleetengine_Delivery_V1_CreateDeliveryVehicleRequest()
      r.parent = parent
      r.deliveryVehicleID = queryValue("deliveryVehicleId", "delivery_vehicle_id")
      r.deliveryVehicle = try decodeBody(DeliveryProtoVehicle.self)
      return try encode(try await rpcs.createDeliveryVehicle(r, caller))
    case .getDeliveryVehicle(let name):
      var r: Maps_Fleetengine_Delivery_V1_GetDeliveryVehicleRequest = try fromQuery()
      r.name = name
      return try encode(try rpcs.getDeliveryVehicle(r, caller))
    case .updateDeliveryVehicle(let name):
      var r = Maps_Fleetengine_Delivery_V1_UpdateDeliveryVehicleRequest()
      r.deliveryVehicle = try decodeBody(DeliveryProtoVehicle.self, required: true)
      r.deliveryVehicle.name = name
      r.updateMask.paths = updateMask()
      return try encode(try await rpcs.updateDeliveryVehicle(r, caller))
    case .deleteDeliveryVehicle(let name):
      var r = Maps_Fleetengine_Delivery_V1_DeleteDeliveryVehicleRequest()
      r.name = name
      return try encode(try await rpcs.deleteDeliveryVehicle(r, caller))
    case .listDeliveryVehicles(let parent):
      var r: Maps_Fleetengine_Delivery_V1_ListDeliveryVehiclesRequest = try fromQuery()
      r.parent = parent
      return try encode(try rpcs.listDeliveryVehicles(r, caller))
    case .createTask(let parent):
      var r = Maps_Fleetengine_Delivery_V1_CreateTaskRequest()
      r.parent = parent
      r.taskID = queryValue("taskId", "task_id")
      r.task = try decodeBody(DeliveryProtoTask.self, required: true)
      return try encode(try await rpcs.createTask(r, caller))
    case .batchCreateTasks(let parent):
      var r = try decodeBody(Maps_Fleetengine_Delivery_V1_BatchCreateTasksRequest.self, required: true)
      r.parent = parent
      return try encode(try await rpcs.batchCreateTasks(r, caller))
    case .getTask(let name):
      var r: Maps_Fleetengine_Delivery_V1_GetTaskRequest = try fromQuery()
      r.name = name
      return try encode(try rpcs.getTask(r, caller))
    case .updateTask(let name):
      var r = Maps_Fleetengine_Delivery_V1_UpdateTaskRequest()
      r.task = try decodeBody(DeliveryProtoTask.self, required: true)
      r.task.name = name
      r.updateMask.paths = updateMask()
      return try encode(try await rpcs.updateTask(r, caller))
    case .deleteTask(let name):
      var r = Maps_Fleetengine_Delivery_V1_DeleteTaskRequest()
      r.name = name
      return try encode(try await rpcs.deleteTask(r, caller))
    case .listTasks(let parent):
      var r: Maps_Fleetengine_Delivery_V1_ListTasksRequest = try fromQuery()
      r.parent = parent
      return try encode(try rpcs.listTasks(r, caller))
    case .getTaskTrackingInfo(let name):
      var r: Maps_Fleetengine_Delivery_V1_GetTaskTrackingInfoRequest = try fromQuery()
      r.name = name
      return try encode(try rpcs.getTaskTrackingInfo(r, caller))
    case .optimizeStops(let name):
      var r = try decodeBody(Fleetkit_V1_OptimizeStopsRequest.self)
      r.name = name
      return try encode(try await rpcs.optimizeStops(r, caller))
    case .watchTrip, .watchRideStatus, .reportLocations, .watchTaskTrackingInfo:
      throw FleetError(.internal, "served by RESTFront itself")
    case .createRide(let parent):
      var r = Fleetkit_V1_CreateRideRequest()
      r.parent = parent
      r.rideID = queryValue("rideId", "ride_id")
      r.ride = try decodeBody(Fleetkit_V1_Ride.self, required: true)
      return try encode(try await rpcs.createRide(r, caller))
    case .getRide(let name):
      var r = Fleetkit_V1_GetRideRequest()
      r.name = name
      return try encode(try rpcs.getRide(r, caller))
    case .listRides(let parent):
      var r: Fleetkit_V1_ListRidesRequest = try fromQuery()
      r.parent = parent
      return try encode(try rpcs.listRides(r, caller))
    case .cancelRide(let name):
      var r = Fleetkit_V1_CancelRideRequest()
      r.name = name
      return try encode(try await rpcs.cancelRide(r, caller))
    case .quoteRide(let parent):
      var r = try decodeBody(Fleetkit_V1_QuoteRideRequest.self)
      r.parent = parent
      return try encode(try await rpcs.quoteRide(r, caller))
    case .listAreas(let parent):
      var r = Fleetkit_V1_ListAreasRequest()
      r.parent = parent
      return try encode(try rpcs.listAreas(r, caller))
    case .rideStatus(let name):
      let identifier = queryValue("rideIdentifier", "ride_identifier")
      return try rideStatusBody(
        try rpcs.rideStatus(name: name, rideIdentifier: identifier.isEmpty ? nil : identifier, caller))
    }
  }

  func queryValue(_ names: String...) -> String {
    query.first { names.contains($0.0) }?.1 ?? ""
  }

  /// `updateMask=tripStatus,vehicleId` (the JSON form is camelCase; snake_case is accepted too).
  func updateMask() -> [String] {
    query.filter { $0.0 == "updateMask" || $0.0 == "update_mask" }
      .flatMap { $0.1.split(separator: ",") }
      .map { Self.snakeCase(String($0).trimmingCharacters(in: .whitespaces)) }
  }

  static func snakeCase(_ path: String) -> String {
    var out = ""
    for c in path {
      if c.isUppercase {
        out += "_" + c.lowercased()
      } else {
        out.append(c)
      }
    }
    return out
  }

  func decodeBody<M: SwiftProtobuf.Message>(_ type: M.Type, required: Bool = false) throws(FleetError) -> M {
    if body.isEmpty || body.allSatisfy({ $0 == 0x20 || $0 == 0x0a || $0 == 0x0d || $0 == 0x09 }) {
      if required { throw .invalid("the request body is required: a JSON \(M.protoMessageName)") }
      return M()
    }
    do {
      return try M(jsonUTF8Bytes: body, options: Self.decoding)
    } catch {
      throw .invalid("the request body is not valid JSON for \(M.protoMessageName): \(error)")
    }
  }

  /// Builds a request message from query parameters (`a.b=value`, repeated keys for lists),
  /// through the proto3 JSON mapping so names and enum values are checked the same way.
  func fromQuery<M: SwiftProtobuf.Message>(repeated: Set<String> = []) throws(FleetError) -> M {
    var root: [String: Any] = [:]
    // `$alt` and `alt` are Google's system parameters (the response format), not the request's.
    for (key, value) in query where !key.isEmpty && !key.hasPrefix("$") && key != "alt" {
      let path = key.split(separator: ".").map(String.init)
      let scalar: Any = value == "true" ? true as Any : (value == "false" ? false as Any : value as Any)
      Self.insert(scalar, at: path[...], into: &root, repeated: repeated.contains(key))
    }
    guard !root.isEmpty else { return M() }
    do {
      let data = try JSONSerialization.data(withJSONObject: root)
      return try M(jsonUTF8Bytes: data, options: Self.decoding)
    } catch {
      throw .invalid("the query parameters are not valid for \(M.protoMessageName): \(error)")
    }
  }

  static func insert(_ value: Any, at path: ArraySlice<String>, into object: inout [String: Any], repeated: Bool) {
    guard let head = path.first else { return }
    if path.count == 1 {
      if repeated {
        object[head] = (object[head] as? [Any] ?? []) + [value]
      } else {
        object[head] = value
      }
      return
    }
    var child = object[head] as? [String: Any] ?? [:]
    insert(value, at: path.dropFirst(), into: &child, repeated: repeated)
    object[head] = child
  }

  func encode<M: SwiftProtobuf.Message>(_ message: M) throws(FleetError) -> Data {
    do {
      return try message.jsonUTF8Data(options: Self.encoding)
    } catch {
      throw FleetError(.internal, "could not encode the response: \(error)")
    }
  }
}
