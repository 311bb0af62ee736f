import FleetCore

/// A colour with alpha, each component 0…1. `hex` is `#RRGGBBAA`, as CSS and map SDKs take it.
public struct RGBAColor: Sendable, Hashable, Codable {
  public var red: Double
  public var green: Double
  public var blue: Double
  public var alpha: Double

  public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
    self.red = red
    self.green = green
    self.blue = blue
    self.alpha = alpha
  }

  /// `#RRGGBB` or `#RRGGBBAA`.
  public init?(hex: String) {
    var digits = Substring(hex)
    if digits.hasPrefix("#") { digits = digits.dropFirst() }
    guard digits.count == 6 || digits.count == 8, let value = UInt32(digits, radix: 16) else { return nil }
    let rgba = digits.count == 6 ? value << 8 | 0xFF : value
    self.init(
      red: Double(rgba >> 24 & 0xFF) / 255, green: Double(rgba >> 16 & 0xFF) / 255,
      blue: Double(rgba >> 8 & 0xFF) / 255, alpha: Double(rgba & 0xFF) / 255)
  }

  public var hex: String {
    let bytes = [red, green, blue, alpha].map { UInt8((min(max($0, 0), 1) * 255).rounded()) }
    return "#" + bytes.map { String(format: "%02X", $0) }.joined()
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(hex)
  }

  public init(from decoder: any Decoder) throws {
    let text = try decoder.singleValueContainer().decode(String.self)
    guard let color = RGBAColor(hex: text) else {
      throw DecodingError.dataCorrupted(
        .init(codingPath: decoder.codingPath, debugDescription: "not #RRGGBB[AA]: \(text)"))
    }
    self = color
  }
}

/// The route lines a journey-sharing map draws (Fleet Engine's `GMTCPolylineType`).
public enum PolylineType: String, Sendable, Hashable, Codable, CodingKeyRepresentable, CaseIterable {
  /// From the vehicle to its next waypoint.
  case activeRoute
  /// After the next waypoint, through the remaining ones.
  case remainingRoute
}

/// The markers a journey-sharing map draws (Fleet Engine's `GMTCMapViewMarkerType`).
public enum MarkerType: String, Sendable, Hashable, Codable, CodingKeyRepresentable, CaseIterable {
  case tripVehicle
  case tripPickupPoint
  case tripDropoffPoint
  case intermediateDestination
}

/// The colours of a route line by traffic speed (Fleet Engine: normal, slow, traffic jam; no
/// data where the server has none).
public struct TrafficColors: Sendable, Hashable, Codable {
  public var normal: RGBAColor
  public var slow: RGBAColor
  public var trafficJam: RGBAColor
  public var noData: RGBAColor

  public init(normal: RGBAColor, slow: RGBAColor, trafficJam: RGBAColor, noData: RGBAColor) {
    self.normal = normal
    self.slow = slow
    self.trafficJam = trafficJam
    self.noData = noData
  }

  public static let standard = TrafficColors(
    normal: RGBAColor(hex: "#4285F4")!, slow: RGBAColor(hex: "#F2A23A")!, trafficJam: RGBAColor(hex: "#DB4437")!,
    noData: RGBAColor(hex: "#4285F4")!)

  public func color(for speed: TrafficSpeed?) -> RGBAColor {
    switch speed {
    case .normal: normal
    case .slow: slow
    case .trafficJam: trafficJam
    case nil: noData
    }
  }
}

/// How a route line is drawn (Fleet Engine's `GMTCPolylineStyleOptions`).
public struct PolylineStyle: Sendable, Hashable, Codable {
  public var strokeWidth: Double
  /// The line's colour when traffic is off.
  public var strokeColor: RGBAColor
  public var isVisible = true
  /// Colour each stretch by its traffic speed instead of `strokeColor`.
  public var isTrafficEnabled = false
  public var trafficColors = TrafficColors.standard
  public var zIndex: Int

  public init(strokeWidth: Double, strokeColor: RGBAColor, zIndex: Int) {
    self.strokeWidth = strokeWidth
    self.strokeColor = strokeColor
    self.zIndex = zIndex
  }
}

/// How a marker is drawn (Fleet Engine's `GMTCMarkerOptions`): an image the app ships, by name.
public struct MarkerStyle: Sendable, Hashable, Codable {
  public var imageName: String
  public var tintColor: RGBAColor?
  public var isVisible = true
  /// Turns with the vehicle's heading (flat on the map) rather than facing the viewer.
  public var isFlat: Bool
  public var zIndex: Int

  public init(imageName: String, tintColor: RGBAColor? = nil, isFlat: Bool = false, zIndex: Int) {
    self.imageName = imageName
    self.tintColor = tintColor
    self.isFlat = isFlat
    self.zIndex = zIndex
  }
}

/// Everything about how a journey-sharing map looks, with Fleet Engine's defaults.
public struct JourneySharingStyle: Sendable, Hashable, Codable {
  public var polylines: [PolylineType: PolylineStyle] = [
    .activeRoute: PolylineStyle(strokeWidth: 6, strokeColor: RGBAColor(hex: "#4285F4")!, zIndex: 2),
    .remainingRoute: PolylineStyle(strokeWidth: 6, strokeColor: RGBAColor(hex: "#9AA0A6")!, zIndex: 1),
  ]
  public var markers: [MarkerType: MarkerStyle] = [
    .tripVehicle: MarkerStyle(imageName: "vehicle", isFlat: true, zIndex: 4),
    .tripPickupPoint: MarkerStyle(imageName: "pickup", zIndex: 3),
    .tripDropoffPoint: MarkerStyle(imageName: "dropoff", zIndex: 3),
    .intermediateDestination: MarkerStyle(imageName: "waypoint", zIndex: 3),
  ]
  /// Extra room around the camera's bounds, as a fraction of their size on each side.
  public var cameraPadding = 0.15

  public init() {}

  public func polylineStyle(_ type: PolylineType) -> PolylineStyle {
    polylines[type] ?? JourneySharingStyle().polylines[type]!
  }

  public func markerStyle(_ type: MarkerType) -> MarkerStyle {
    markers[type] ?? JourneySharingStyle().markers[type]!
  }
}
