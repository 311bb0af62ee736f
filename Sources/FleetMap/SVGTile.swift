import FleetRouting
import Foundation

/// How a road class is drawn: colours after OpenStreetMap's standard style, the zoom it
/// appears at, its width at zoom 16.
struct RoadStyle: Sendable {
  var drawOrder: Int
  var fill: String
  var casing: String
  var widthAt16: Double
  var minimumZoom: Int

  static let byDrawOrder: [RoadStyle] = [
    RoadStyle(drawOrder: 0, fill: "#ffffff", casing: "#cfcac2", widthAt16: 3, minimumZoom: 15),  // service, tracks
    RoadStyle(drawOrder: 1, fill: "#ffffff", casing: "#bbb5ab", widthAt16: 6, minimumZoom: 13),  // residential
    RoadStyle(drawOrder: 2, fill: "#ffffff", casing: "#9e978c", widthAt16: 8, minimumZoom: 11),  // tertiary
    RoadStyle(drawOrder: 3, fill: "#f7fabf", casing: "#8a9540", widthAt16: 9, minimumZoom: 10),  // secondary
    RoadStyle(drawOrder: 4, fill: "#fcd6a4", casing: "#a06b00", widthAt16: 10, minimumZoom: 8),  // primary
    RoadStyle(drawOrder: 5, fill: "#f9b29c", casing: "#c84e2f", widthAt16: 11, minimumZoom: 6),  // trunk
    RoadStyle(drawOrder: 6, fill: "#e892a2", casing: "#dc2a67", widthAt16: 12, minimumZoom: 5),  // motorway
    RoadStyle(drawOrder: 7, fill: "#ffffff", casing: "#9e978c", widthAt16: 6, minimumZoom: 12),  // links
  ]

  init(drawOrder: Int, fill: String, casing: String, widthAt16: Double, minimumZoom: Int) {
    self.drawOrder = drawOrder
    self.fill = fill
    self.casing = casing
    self.widthAt16 = widthAt16
    self.minimumZoom = minimumZoom
  }

  init(_ roadClass: RoadClass) {
    let order: Int
    switch roadClass {
    case .motorway: order = 6
    case .trunk: order = 5
    case .primary: order = 4
    case .secondary: order = 3
    case .tertiary: order = 2
    case .motorwayLink, .trunkLink, .primaryLink, .secondaryLink, .tertiaryLink: order = 7
    case .unclassified, .residential, .livingStreet, .other: order = 1
    case .service, .track, .footPath: order = 0
    }
    self = Self.byDrawOrder[order]
  }

  /// Width in pixels: halves about every 1.3 zoom levels below 16, grows above it.
  func width(zoom: Int) -> Double {
    max(0.6, widthAt16 * pow(2, Double(zoom - 16) * 0.75))
  }
}

/// An SVG document under construction.
struct SVGTile {
  var defs = ""
  var body = ""
  var labels = ""
  var labelCount = 0

  mutating func addArea(_ rings: [[Pixel]], kind: MapAreaKind) {
    if kind == .coastline {
      let d = rings.map(Self.path).joined()
      body += "<path d=\"\(d)\" fill=\"none\" stroke=\"\(kind.colour)\" stroke-width=\"2\"/>"
      return
    }
    let d = rings.filter { $0.count >= 3 }.map { Self.path($0) + "Z" }.joined()
    guard !d.isEmpty else { return }
    body += "<path d=\"\(d)\" fill=\"\(kind.colour)\" fill-rule=\"evenodd\"/>"
  }

  mutating func addRoads(_ lines: [[Pixel]], style: RoadStyle, zoom: Int, casing: Bool) {
    let width = style.width(zoom: zoom)
    // Casings only where roads are wide enough to show one.
    if casing && width < 2.5 { return }
    let d = lines.map(Self.path).joined()
    let stroke = casing ? style.casing : (width < 2.5 ? style.casing : style.fill)
    let drawn = casing ? width + 2 : width
    body += "<path d=\"\(d)\" stroke=\"\(stroke)\" stroke-width=\"\(Self.number(drawn))\"/>"
  }

  mutating func addLabel(_ path: [Pixel], text: String, fontSize: Int) {
    let id = "l\(labelCount)"
    labelCount += 1
    defs += "<path id=\"\(id)\" d=\"\(Self.path(path))\"/>"
    labels +=
      "<text font-size=\"\(fontSize)\" dy=\"\(fontSize / 3)\"><textPath href=\"#\(id)\" startOffset=\"50%\" text-anchor=\"middle\">\(Self.escaped(text))</textPath></text>"
  }

  func document() -> String {
    let size = TileRenderer.size
    return """
      <svg xmlns="http://www.w3.org/2000/svg" width="\(size)" height="\(size)" viewBox="0 0 \(size) \(size)">\
      <defs>\(defs)</defs><rect width="\(size)" height="\(size)" fill="\(MapAreaKind.landColour)"/>\
      <g fill="none" stroke-linecap="round" stroke-linejoin="round">\(body)</g>\
      <g font-family="sans-serif" fill="#333" stroke="#fff" stroke-width="3" paint-order="stroke">\(labels)</g></svg>
      """
  }

  static func path(_ points: [Pixel]) -> String {
    var d = ""
    for (i, p) in points.enumerated() { d += (i == 0 ? "M" : "L") + number(p.x) + " " + number(p.y) }
    return d
  }

  /// One decimal is finer than a pixel needs.
  static func number(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    let sign = tenths < 0 ? "-" : ""
    let magnitude = abs(tenths)
    return magnitude % 10 == 0 ? "\(sign)\(magnitude / 10)" : "\(sign)\(magnitude / 10).\(magnitude % 10)"
  }

  static func escaped(_ text: String) -> String {
    var out = ""
    for c in text {
      switch c {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      default: out.append(c)
      }
    }
    return out
  }
}
