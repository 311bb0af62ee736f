/// How a road is named, as OSRM's guidance reads it: the strings behind its name id (`name`,
/// `ref`, `name:pronunciation`, `junction:ref` and, on one-ways, the signposted destinations).
/// Two roads with equal labels have one name id in OSRM; an empty label is its empty id.
struct RoadLabel: Sendable, Hashable {
  var name = ""
  var ref = ""
  var pronunciation = ""
  /// `junction:ref`: the exit numbers.
  var exits = ""
  var destinations = ""

  var isEmpty: Bool { self == RoadLabel() }
}

/// OSRM's rules for when two names are one road (`name_announcements.hpp`): what guidance says
/// and which roads junction geometry merges both read them.
enum RoadNames {
  /// OSRM's rule for when a change of road must be said (`requiresNameAnnounced`,
  /// name_announcements.hpp): a name that only gains or loses a part or a compass suffix, or a
  /// reference that is kept, is the same road to a driver; a reference becoming a name, or the
  /// reverse, is said, as is a new reference on unnamed roads, a name spoken otherwise, and a
  /// new exit number (but not one lost under the same name: ramps often carry it on their
  /// first piece alone). Destinations are not compared.
  ///
  /// Guidance at junctions reads compass words with the car profile's suffixes; OSRM's
  /// post-processing (collapsing steps, ends of roads) has no suffix table and passes none, so
  /// there "West Street" and "East Street" are two roads.
  static func requiresNameAnnounced(from: RoadLabel, to: RoadLabel, suffixes: Set<String> = nameSuffixes) -> Bool {
    if from.name.isEmpty && from.ref.isEmpty && !(to.name.isEmpty && to.ref.isEmpty) { return true }
    let namesAreEmpty = from.name.isEmpty && to.name.isEmpty
    let nameIsContained = from.name.hasPrefix(to.name) || to.name.hasPrefix(from.name)
    let isSuffixChange = isSuffixChange(from.name, to.name, suffixes: suffixes)
    let namesAreEqual = from.name == to.name || nameIsContained || isSuffixChange
    let nameIsRemoved = !from.name.isEmpty && to.name.isEmpty
    let refsAreEmpty = from.ref.isEmpty && to.ref.isEmpty
    let refIsContained =
      from.ref.isEmpty || to.ref.isEmpty || from.ref.contains(to.ref) || to.ref.contains(from.ref)
    let refIsRemoved = !from.ref.isEmpty && to.ref.isEmpty
    let obviousChange =
      (namesAreEmpty && refsAreEmpty) || (namesAreEqual && refIsContained) || (namesAreEqual && refsAreEmpty)
      || (refIsContained && nameIsRemoved) || (namesAreEqual && refIsRemoved) || isSuffixChange
    let needsAnnouncement =
      (from.name.isEmpty && !from.ref.isEmpty && !to.name.isEmpty && to.ref.isEmpty)
      || (!from.name.isEmpty && from.ref.isEmpty && to.name.isEmpty && !to.ref.isEmpty)
      || (namesAreEmpty && !refIsContained)
    let losesExit = namesAreEqual && !from.exits.isEmpty && to.exits.isEmpty
    return !obviousChange || needsAnnouncement || from.pronunciation != to.pronunciation
      || (from.exits != to.exits && !losesExit)
  }

  /// OSRM's `HaveIdenticalNames`: both roads named, and neither name a change to say from the
  /// other ("East Terrace" and "North Terrace" are one road by the compass rule).
  static func areIdentical(_ a: RoadLabel, _ b: RoadLabel) -> Bool {
    !a.isEmpty && !b.isEmpty && !requiresNameAnnounced(from: a, to: b) && !requiresNameAnnounced(from: b, to: a)
  }

  /// The car profile's name suffixes, which alone do not make another road ("Main Street North").
  static let nameSuffixes: Set<String> = [
    "n", "ne", "e", "se", "s", "sw", "w", "nw", "north", "south", "west", "east", "nor", "sou", "we", "ea",
  ]

  /// Whether two names differ only by suffixes or prefixes around what they share (OSRM's
  /// `checkForPrefixOrSuffixChange`); two equal names do.
  static func isSuffixChange(_ first: String, _ second: String, suffixes: Set<String> = nameSuffixes) -> Bool {
    let (a, b) = (Array(first.utf8), Array(second.utf8))
    let common = longestCommonSubstring(a, b)
    let parts: [ArraySlice<UInt8>]
    if common.isEmpty {
      parts = [a[...], b[...]]
    } else {
      let inA = firstIndex(of: common, in: a)
      let inB = firstIndex(of: common, in: b)
      parts = [a[..<inA], a[(inA + common.count)...], b[..<inB], b[(inB + common.count)...]]
    }
    return parts.allSatisfy { part in
      let word = trimmedLowercase(part)
      return word.isEmpty || suffixes.contains(word)
    }
  }

  /// OSRM's `longest_common_substring`, byte for byte, including its table rows that are not
  /// cleared between characters (so its answers, not the textbook's).
  static func longestCommonSubstring(_ a: [UInt8], _ b: [UInt8]) -> ArraySlice<UInt8> {
    guard !a.isEmpty, !b.isEmpty else { return [] }
    var previous = [UInt32](repeating: 0, count: b.count)
    var current = previous
    var best: UInt32 = 0
    var bestEnd = 0
    for i in a.indices {
      for j in b.indices where a[i] == b[j] {
        current[j] = j == 0 ? 1 : previous[j - 1] + 1
        if current[j] > best {
          best = current[j]
          bestEnd = i + 1
        }
      }
      swap(&previous, &current)
    }
    return a[(bestEnd - Int(best))..<bestEnd]
  }

  static func firstIndex(of part: ArraySlice<UInt8>, in bytes: [UInt8]) -> Int {
    guard part.count <= bytes.count else { return 0 }
    for start in 0...(bytes.count - part.count) where bytes[start..<(start + part.count)].elementsEqual(part) {
      return start
    }
    return 0
  }

  static func trimmedLowercase(_ bytes: ArraySlice<UInt8>) -> String {
    let lowered = bytes.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
    guard let front = lowered.firstIndex(where: { $0 != 32 }), let back = lowered.lastIndex(where: { $0 != 32 }) else {
      return ""
    }
    return String(decoding: lowered[front...back], as: UTF8.self)
  }
}
