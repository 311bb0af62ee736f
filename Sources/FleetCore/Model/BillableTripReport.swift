import Foundation

/// A ReportBillableTrip call, kept for billing.
public struct BillableTripReport: Sendable, Hashable, Codable {
  public var provider: String
  public var billableTripID: String
  public var countryCode: String
  public var platform: Int
  public var relatedIDs: [String]
  public var solutionType: Int
  public var reportTime: Date

  public init(
    provider: String, billableTripID: String, countryCode: String, platform: Int, relatedIDs: [String],
    solutionType: Int, reportTime: Date
  ) {
    self.provider = provider
    self.billableTripID = billableTripID
    self.countryCode = countryCode
    self.platform = platform
    self.relatedIDs = relatedIDs
    self.solutionType = solutionType
    self.reportTime = reportTime
  }
}
