import FleetCore
import FleetGeocoding
import FleetGeometry
import FleetPlaces
import FleetTestSupport
import Foundation
import Testing

/// The engine built once from the real Monaco extract and GeoNames' cities (`monacoGeocoding`).
enum Monaco {
  static func engine() async throws -> GeocodingEngine { try await monacoGeocoding() }
}

@Suite struct MonacoReverseGeocodingTests {

  @Test func aHouseNumberWhereTheDataHasOne() async throws {
    let engine = try await Monaco.engine()
    // 6 Quai Antoine 1er is an address node in the extract; 10 m from it is still that address.
    let address = try engine.reverse(LatLng(latitude: 43.73300, longitude: 7.42580))
    #expect(address.houseNumber == "6")
    #expect(address.street == "Quai Antoine 1er")
    #expect(address.city == "Monaco")
    #expect(address.place == "La Condamine")
    #expect(address.countryCode == "MC")
    #expect(address.distance < 15)
    #expect(address.formatted.hasPrefix("6 Quai Antoine 1er, La Condamine, Monaco"))
  }

  @Test func theStreetWhereThereIsNoAddressNearby() async throws {
    let engine = try await Monaco.engine()
    let address = try engine.reverse(LatLng(latitude: 43.7384, longitude: 7.4246))
    #expect(address.houseNumber == nil)
    #expect(address.street == "Avenue de l'Hermitage")
    #expect(address.place == "Monte-Carlo")
    #expect(address.city == "Monaco")
    #expect(address.countryCode == "MC")
    #expect(address.distance < 20)
  }

  @Test(arguments: [
    (43.7277, 7.4183, "Fontvieille"), (43.7315, 7.4210, "Monaco-Ville"), (43.7340, 7.4200, "La Condamine"),
    (43.7396, 7.4270, "Monte-Carlo"),
  ])
  func theQuarterFromItsBoundary(latitude: Double, longitude: Double, quarter: String) async throws {
    let engine = try await Monaco.engine()
    let address = try engine.reverse(LatLng(latitude: latitude, longitude: longitude))
    #expect(address.place == quarter)
    #expect(address.city == "Monaco")
  }

  @Test func aBorderTownGetsItsOwnCountryAndNotTheNeighboursQuarter() async throws {
    let engine = try await Monaco.engine()
    // Beausoleil (France) is across the street from Monte-Carlo.
    let address = try engine.reverse(LatLng(latitude: 43.7470, longitude: 7.4220))
    #expect(address.city == "Beausoleil")
    #expect(address.countryCode == "FR")
    #expect(address.region == "Provence-Alpes-Cote d'Azur")
    #expect(address.place != "Monte-Carlo")
  }

  @Test func outsideTheExtractTheCityComesFromGeoNames() async throws {
    let engine = try await Monaco.engine()
    let address = try engine.reverse(LatLng(latitude: 48.8566, longitude: 2.3522))
    #expect(address.street == nil)
    #expect(address.city == "Paris")
    #expect(address.region == "Ile-de-France")
    #expect(address.countryCode == "FR")
    #expect(address.distance < 1_000)
  }

  @Test func theOpenSeaHasNoAddress() async throws {
    let engine = try await Monaco.engine()
    let error = #expect(throws: FleetError.self) { try engine.reverse(LatLng(latitude: 30, longitude: -40)) }
    #expect(error?.code == .notFound)
  }

  @Test func aCoordinateOffTheGlobeIsRejectedNamingTheRule() async throws {
    let engine = try await Monaco.engine()
    let error = #expect(throws: FleetError.self) { try engine.reverse(LatLng(latitude: 91, longitude: 0)) }
    #expect(error?.code == .invalidArgument)
    #expect(error?.message.contains("latitude in -90…90") == true)
  }
}

@Suite struct MonacoPlaceSearchTests {
  let portHercule = LatLng(latitude: 43.7345, longitude: 7.4230)

  @Test func monacosPharmaciesByKeywordNearestFirst() async throws {
    let engine = try await Monaco.engine()
    let page = try engine.search(PlaceSearch(keyword: "pharmacy", city: "Monaco", near: portHercule))
    #expect(page.places.count >= 5)
    #expect(page.places.allSatisfy { $0.category == "amenity=pharmacy" && $0.city == "Monaco" })
    #expect(page.places.map(\.name).contains("Pharmacie Internationale"))
    let distances = page.places.compactMap(\.distance)
    #expect(distances.count == page.places.count)
    #expect(distances == distances.sorted())
  }

  @Test(arguments: ["PHARMACIE", "pharmacie", "Pharm", "pharmacíe"])
  func caseAccentsAndPrefixesDoNotMatter(keyword: String) async throws {
    let engine = try await Monaco.engine()
    let page = try engine.search(PlaceSearch(keyword: keyword, city: "monaco"))
    #expect(page.places.contains { $0.name == "Pharmacie Internationale" })
  }

  @Test func accentsInTheDataDoNotMatterEither() async throws {
    let engine = try await Monaco.engine()
    let page = try engine.search(PlaceSearch(keyword: "carnoles"))
    #expect(page.places.contains { $0.name == "Pharmacie de Carnolès" })
  }

  @Test func namesInOtherLanguagesAreSearched() async throws {
    let engine = try await Monaco.engine()
    let english = try engine.search(PlaceSearch(keyword: "embassy of italy"))
    #expect(english.places.first?.name == "Ambassade d'Italie à Monaco")
    let italian = try engine.search(PlaceSearch(keyword: "ambasciata"))
    #expect(italian.places.first?.otherNames["it"] == "Ambasciata d'Italia a Monaco")
  }

  @Test func aWholeNameMatchRanksAboveACategoryMatch() async throws {
    let engine = try await Monaco.engine()
    let page = try engine.search(PlaceSearch(keyword: "casino", city: "Monaco", near: portHercule))
    #expect(page.places.contains { $0.name == "Casino de Monte Carlo" && $0.category == "amenity=casino" })
    // "Casino" (a grocer) is named exactly the keyword: it comes first, however far it is.
    #expect(page.places.first?.name == "Casino")
  }

  @Test func withoutACityTheSearchersCityIsUsed() async throws {
    let engine = try await Monaco.engine()
    let page = try engine.search(PlaceSearch(keyword: "pharmacy", near: portHercule))
    #expect(page.city == "Monaco")
    #expect(page.places.allSatisfy { $0.city == "Monaco" })
    let beausoleil = try engine.search(PlaceSearch(keyword: "pharmacy", city: "Beausoleil"))
    #expect(beausoleil.places.allSatisfy { $0.city == "Beausoleil" })
    #expect(Set(beausoleil.places.map(\.id)).isDisjoint(with: page.places.map(\.id)))
  }

  @Test func pagesFollowOneAnotherWithoutGapsOrRepeats() async throws {
    let engine = try await Monaco.engine()
    let all = try engine.search(PlaceSearch(keyword: "restaurant", city: "Monaco", near: portHercule, pageSize: 100))
    #expect(all.places.count > 5)
    var paged: [Place] = []
    var token: String?
    repeat {
      let page = try engine.search(
        PlaceSearch(keyword: "restaurant", city: "Monaco", near: portHercule, pageSize: 3, pageToken: token))
      #expect(page.places.count <= 3)
      paged += page.places
      token = page.nextPageToken
    } while token != nil
    #expect(paged.map(\.id) == all.places.map(\.id))
  }

  @Test func badSearchesNameTheFieldAndTheRule() async throws {
    let engine = try await Monaco.engine()
    let empty = #expect(throws: FleetError.self) { try engine.search(PlaceSearch(keyword: " -- ")) }
    #expect(empty?.code == .invalidArgument)
    #expect(empty?.message.contains("q (the keyword)") == true)
    let size = #expect(throws: FleetError.self) { try engine.search(PlaceSearch(keyword: "bar", pageSize: 0)) }
    #expect(size?.message.contains("page_size must be 1…100") == true)
    let token = #expect(throws: FleetError.self) {
      try engine.search(PlaceSearch(keyword: "bar", pageToken: "xyz"))
    }
    #expect(token?.message.contains("page_token") == true)
    let city = #expect(throws: FleetError.self) { try engine.search(PlaceSearch(keyword: "bar", city: "Atlantis")) }
    #expect(city?.code == .notFound)
    #expect(city?.message.contains("city 'Atlantis'") == true)
  }
}
