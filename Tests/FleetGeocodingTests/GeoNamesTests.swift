import FleetCore
import FleetGeometry
import Testing

@testable import FleetGeocoding

@Suite struct GeoNamesTests {
  @Test func quotedFieldsWithCommasAndQuotes() {
    let line = #"47.25,8.85,"Rueti / Dorfzentrum, Suedl. Teil",Zurich,"Bezirk ""Hinwil""",CH"# + "\r"
    let fields = GeoNamesCities.csvFields(ArraySlice(Array(line.utf8)))
    #expect(fields == ["47.25", "8.85", "Rueti / Dorfzentrum, Suedl. Teil", "Zurich", #"Bezirk "Hinwil""#, "CH"])
  }

  @Test func theNearestCityAcrossCellBorders() {
    let cities = GeoNamesCities(cities: [
      .init(
        coordinate: LatLng(latitude: 0.49, longitude: 0.49), name: "A", region: "", subregion: "", countryCode: "AA"),
      .init(
        coordinate: LatLng(latitude: 0.51, longitude: 0.51), name: "B", region: "", subregion: "", countryCode: "BB"),
      .init(coordinate: LatLng(latitude: 3, longitude: 3), name: "C", region: "", subregion: "", countryCode: "CC"),
    ])
    #expect(cities.nearest(to: LatLng(latitude: 0.505, longitude: 0.505))?.city.name == "B")
    #expect(cities.nearest(to: LatLng(latitude: 0.499, longitude: 0.499))?.city.name == "A")
    #expect(cities.nearest(to: LatLng(latitude: 2.6, longitude: 2.6), maximumDistance: 100_000)?.city.name == "C")
    #expect(cities.nearest(to: LatLng(latitude: 10, longitude: 10), maximumDistance: 100_000) == nil)
  }

  @Test func foldingIgnoresCaseAccentsAndPunctuation() {
    #expect(TextFolding.key("Monte-Carlo") == TextFolding.key("monte carlo"))
    #expect(TextFolding.key("Èze") == "eze")
    #expect(TextFolding.key("  Cap-d'Ail ") == "cap d ail")
  }
}
