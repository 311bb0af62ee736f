import SwiftProtobuf

extension SwiftProtobuf.Message {
  /// The same bytes read as another message with the same fields and numbers: Fleet Engine's two
  /// APIs define twins (v1's `VehicleLocation`, the Deliveries API's `DeliveryVehicleLocation`),
  /// and one conversion serves both.
  public func rewired<Twin: SwiftProtobuf.Message>(as _: Twin.Type = Twin.self) -> Twin {
    // Both sides are generated from matching definitions: the bytes always parse.
    (try? Twin(serializedBytes: (try? serializedBytes() as [UInt8]) ?? [])) ?? Twin()
  }
}
