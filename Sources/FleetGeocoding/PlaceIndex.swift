import FleetCore
import FleetGeometry
import FleetPlaces
import Foundation
import GRDB

/// Places of interest in SQLite with an FTS5 full-text index over every name and the category:
/// case- and diacritics-insensitive (`unicode61 remove_diacritics 2`), words matched by prefix.
/// Results rank by how well the text matches — the whole name, all words in a name, only the
/// category — then by distance from the searcher, then by FTS5's bm25.
struct PlaceIndex: Sendable {
  let database: DatabaseQueue

  /// An index in memory, or in the SQLite file at `path` (rebuilt).
  init(path: String? = nil) throws {
    if let path {
      try? FileManager.default.removeItem(atPath: path)
      database = try DatabaseQueue(path: path)
    } else {
      database = try DatabaseQueue()
    }
    try database.write { db in
      try db.execute(
        sql: """
          CREATE TABLE place (
            id INTEGER PRIMARY KEY,
            osm_id TEXT NOT NULL,
            name TEXT NOT NULL,
            other_names TEXT NOT NULL,
            category TEXT NOT NULL,
            latitude REAL NOT NULL,
            longitude REAL NOT NULL,
            street TEXT,
            house_number TEXT,
            district TEXT,
            city TEXT,
            country_code TEXT,
            city_key TEXT,
            district_key TEXT
          );
          CREATE INDEX place_city ON place(city_key);
          CREATE INDEX place_district ON place(district_key);
          CREATE VIRTUAL TABLE place_text USING fts5(
            name, other_names, category, tokenize = 'unicode61 remove_diacritics 2'
          );
          """)
    }
  }

  /// Adds places; their city and district keys are folded here.
  func insert(_ places: [Place]) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    try database.write { db in
      let row = try db.makeStatement(
        sql: """
          INSERT INTO place (osm_id, name, other_names, category, latitude, longitude, street, house_number,
            district, city, country_code, city_key, district_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
          """)
      let text = try db.makeStatement(
        sql: "INSERT INTO place_text (rowid, name, other_names, category) VALUES (?, ?, ?, ?)")
      for place in places {
        let names = String(decoding: try encoder.encode(place.otherNames), as: UTF8.self)
        try row.execute(arguments: [
          place.id, place.name, names, place.category, place.coordinate.latitude, place.coordinate.longitude,
          place.street, place.houseNumber, place.place, place.city, place.countryCode,
          place.city.map(TextFolding.key), place.place.map(TextFolding.key),
        ])
        // The category is searchable by its value's words: "amenity=fast_food" → "fast food".
        let categoryWords = place.category.split(separator: "=").last.map {
          $0.replacingOccurrences(of: "_", with: " ")
        }
        try text.execute(arguments: [
          db.lastInsertedRowID, place.name, place.otherNames.values.sorted().joined(separator: " "), categoryWords,
        ])
      }
    }
  }

  /// Whether any place is filed under this city or district.
  func knows(city: String) throws -> Bool {
    let key = TextFolding.key(city)
    return try database.read { db in
      try Bool.fetchOne(
        db, sql: "SELECT EXISTS (SELECT 1 FROM place WHERE city_key = ? OR district_key = ?)", arguments: [key, key])
        ?? false
    }
  }

  /// Every match in `city` (all cities when nil), best first.
  func search(words: [String], city: String?, near: LatLng?) throws -> [Place] {
    // Each word must appear, as a word or the start of one, in some name or the category.
    let match = words.map { "\"\($0.replacingOccurrences(of: "\"", with: "\"\""))\"*" }.joined(separator: " ")
    var sql = """
      SELECT place.*, bm25(place_text, 10.0, 5.0, 1.0) AS score
      FROM place_text JOIN place ON place.id = place_text.rowid
      WHERE place_text MATCH ?
      """
    var arguments: StatementArguments = [match]
    if let city {
      let key = TextFolding.key(city)
      sql += " AND (place.city_key = ? OR place.district_key = ?)"
      arguments += [key, key]
    }
    let wanted = words.joined(separator: " ")
    let decoder = JSONDecoder()
    let scored = try database.read { db in
      try Row.fetchAll(db, sql: sql, arguments: arguments).map { row -> (Place, tier: Int, score: Double) in
        let names: String = row["other_names"]
        var place = Place(
          id: row["osm_id"], name: row["name"],
          otherNames: (try? decoder.decode([String: String].self, from: Data(names.utf8))) ?? [:],
          category: row["category"],
          coordinate: LatLng(latitude: row["latitude"], longitude: row["longitude"]), street: row["street"],
          houseNumber: row["house_number"], place: row["district"], city: row["city"],
          countryCode: row["country_code"])
        place.distance = near.map { place.coordinate.distance(to: $0) }
        return (place, Self.tier(of: place, wanted: wanted, words: words), row["score"])
      }
    }
    return
      scored.sorted { a, b in
        if a.tier != b.tier { return a.tier < b.tier }
        if let da = a.0.distance, let db = b.0.distance, da != db { return da < db }
        if a.score != b.score { return a.score < b.score }
        return a.0.id < b.0.id
      }
      .map(\.0)
  }

  /// 0: a name is exactly the keyword; 1: a name holds every word; 2: only together with the
  /// category.
  static func tier(of place: Place, wanted: String, words: [String]) -> Int {
    let names = [place.name] + place.otherNames.values
    let keys = names.map(TextFolding.key)
    if keys.contains(wanted) { return 0 }
    let holdsAll = keys.contains { key in
      let nameWords = key.split(separator: " ")
      return words.allSatisfy { word in nameWords.contains { $0.hasPrefix(word) } }
    }
    return holdsAll ? 1 : 2
  }
}
