import FleetCore
import FleetProto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

extension RESTFront {
  /// `POST /fleetkit/v1/providers/{p}/vehicles:reportLocations`: a batch of location reports
  /// (fleetkit.v1.ReportLocationsRequest as proto3 JSON), answered per report once stored
  /// (ReportLocationsResponse), with the stream's rules. The request fails as a whole only
  /// when it cannot be read, carries too many reports, or its token is refused.
  func reportLocations(_ parent: String, _ request: Request, _ context: FleetRequestContext, requestID: String) async
    -> Response
  {
    do {
      let provider = try ProviderName(parsing: parent).provider
      let body: Data
      switch await requestBody(request, context, requestID: requestID) {
      case .read(let read): body = read
      case .refused(let refusal): return refusal
      }
      let call = RESTCall(route: RESTRoute(target: .reportLocations(parent: parent)), body: body, query: [])
      let message = try call.decodeBody(Fleetkit_V1_ReportLocationsRequest.self, required: true)
      guard message.authorization.isEmpty else {
        throw FleetError.invalid("authorization belongs in the Authorization header, not in the body")
      }
      guard message.reports.count <= maximumReports else {
        throw FleetError.invalid("reports: at most \(maximumReports) reports per request, got \(message.reports.count)")
      }
      let vehicles = try VehicleReadMask.acknowledgements(of: message)
      let submitted = await intake.submit(
        message.reports, authorization: request.headers[.authorization], requestID: requestID, provider: provider)
      if let refusal = submitted.admissionFailure { throw refusal }
      let response = await intake.answer(
        submitted, vehicles: vehicles, transport: "rest", call: "\(message.reports.count) reports")
      var headers = HTTPFields()
      headers[.contentType] = "application/json; charset=utf-8"
      headers[.init("x-request-id")!] = requestID
      let json = try call.encode(response)
      return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: json)))
    } catch let error as FleetError {
      gate.record(
        .reportLocations, transport: "rest", requestID: requestID, caller: nil, outcomes: [error], elapsed: .zero)
      return Self.errorResponse(error, status: error.code.httpStatus, requestID: requestID)
    } catch {
      return Self.errorResponse(FleetError(.internal, "\(error)"), status: .internalServerError, requestID: requestID)
    }
  }
}
