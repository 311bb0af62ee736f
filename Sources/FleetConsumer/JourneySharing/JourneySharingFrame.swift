import FleetCore
import FleetGeometry

/// What a map shows of a trip at one moment: ready to draw with MapKit (one `MKPolyline` per
/// line, one annotation per marker, `setVisibleMapRect` from the camera) or on a web page (it
/// is `Codable`; colours are `#RRGGBBAA`).
public struct JourneySharingFrame: Sendable, Hashable, Codable {
  public var tripStatus: String
  /// Lines in drawing order (lowest `zIndex` first); a route with traffic on is split into one
  /// line per colour.
  public var polylines: [MapPolyline]
  /// The vehicle (when it has reported), pickup, drop-off and intermediate destinations.
  public var markers: [MapMarker]
  /// Bounds that fit the vehicle and its next waypoint (pickup and drop-off before a vehicle is
  /// assigned), padded by the style's `cameraPadding`; nil with nothing to show.
  public var camera: Viewport?
}

public struct MapPolyline: Sendable, Hashable, Codable {
  public var type: PolylineType
  public var points: [LatLng]
  public var color: RGBAColor
  public var width: Double
  public var zIndex: Int
  /// The traffic speed this piece is coloured for; nil with traffic off or no data.
  public var trafficSpeed: TrafficSpeed?
}

public struct MapMarker: Sendable, Hashable, Codable {
  public var type: MarkerType
  public var position: LatLng
  /// Degrees clockwise from north (the vehicle only).
  public var heading: Double?
  public var style: MarkerStyle
  /// Which intermediate destination, for those.
  public var index: Int?
}
