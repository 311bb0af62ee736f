import FleetGeometry
import Foundation

/// What a navigation app says and shows while a step is driven, in English: Mapbox's
/// `voiceInstructions` and `bannerInstructions`, which navigation SDKs that read OSRM responses
/// (Ferrostar, Mapbox's) take. A step's instructions are about the maneuver at its end (the
/// next step's), each given when that many metres are left before it (`distanceAlongGeometry`).
/// The wording follows OSRM's own English instructions (osrm-text-instructions).
public struct StepInstructions: Sendable, Hashable {
  public struct Spoken: Sendable, Hashable {
    /// Metres before the maneuver at the step's end.
    public var distanceAlongGeometry: Double
    public var announcement: String
    /// The announcement in SSML, for speech engines that read it.
    public var ssmlAnnouncement: String
  }

  public struct Banner: Sendable, Hashable {
    public var distanceAlongGeometry: Double
    /// The road or place the maneuver leads to, with the maneuver's type and modifier (what
    /// the banner's arrow is drawn from).
    public var text: String
    public var kind: RouteStep.Kind
    public var modifier: RouteStep.Modifier?
    /// For a roundabout's exit, the exit's number; the banner reads "Exit N" under the text.
    public var exit: Int?
    /// The lanes at the maneuver, left to right, where its road's `turn:lanes` say them (the
    /// banner's second line, `sub`, draws them).
    public var lanes: [Lane] = []
  }

  /// One lane on a banner: its arrows, whether the route may use it, and which arrow it is used
  /// for (Mapbox's `active_direction`).
  public struct Lane: Sendable, Hashable {
    public var directions: [String]
    public var active: Bool
    public var activeDirection: String?
  }

  public var spoken: [Spoken]
  public var banners: [Banner]
}

/// Distances as a voice says them.
public enum VoiceUnits: String, Sendable, Hashable {
  case metric, imperial
}

public enum Instructions {
  /// Each step's instructions, in step order; the last step (the arrival) has none.
  public static func of(_ steps: [RouteStep], units: VoiceUnits = .metric) -> [StepInstructions] {
    steps.indices.map { i in
      guard i + 1 < steps.count else { return StepInstructions(spoken: [], banners: []) }
      let step = steps[i]
      let next = steps[i + 1]
      let length = step.distance
      let upcoming = text(for: next)
      var spoken: [(Double, String)] = []
      if i == 0 {
        // Leaving: what to do first, and the next maneuver too when it comes soon.
        let depart = text(for: step)
        spoken.append((length, length < 250 ? "\(depart), then \(lowercasedFirst(upcoming))" : depart))
      } else if length >= 1000 {
        spoken.append((length, "Continue for \(spokenDistance(length, units))"))
      }
      // An early warning where there is room for one: further ahead at higher speeds.
      let speed = step.duration > 0 ? length / step.duration : 10
      let early: Double = speed > 20 ? 1600 : speed > 13 ? 800 : 400
      let last = min(length, max(30, min(speed * 6, 200)))
      if length > early + 100, i > 0 || length >= 250 {
        spoken.append((early, "In \(spokenDistance(early, units)), \(lowercasedFirst(upcoming))"))
      }
      if i > 0 || length >= 250 { spoken.append((last, upcoming)) }
      let banner = StepInstructions.Banner(
        distanceAlongGeometry: length, text: bannerText(for: next), kind: next.maneuver.kind,
        modifier: next.maneuver.modifier, exit: next.maneuver.exit, lanes: bannerLanes(for: next))
      return StepInstructions(
        spoken: spoken.map { distance, text in
          StepInstructions.Spoken(
            distanceAlongGeometry: (distance * 10).rounded() / 10, announcement: text, ssmlAnnouncement: ssml(text))
        }, banners: [banner])
    }
  }

  /// The step's maneuver as a sentence (osrm-text-instructions' English, v5).
  public static func text(for step: RouteStep) -> String {
    let maneuver = step.maneuver
    let onto = wayName(step).map { " onto \($0)" } ?? ""
    let modifier = maneuver.modifier
    switch maneuver.kind {
    case .depart:
      return "Head \(compassDirection(maneuver.bearingAfter))" + (wayName(step).map { " on \($0)" } ?? "")
    case .arrive:
      switch modifier {
      case .left, .slightLeft, .sharpLeft: return "You have arrived at your destination, on the left"
      case .right, .slightRight, .sharpRight: return "You have arrived at your destination, on the right"
      default: return "You have arrived at your destination"
      }
    case .turn, .endOfRoad:
      switch modifier {
      case .straight: return "Go straight" + onto
      case .uturn: return "Make a U-turn" + onto
      case let m?: return "Turn \(m.rawValue)" + onto
      case nil: return "Turn" + onto
      }
    case .continue, .notification:
      switch modifier {
      case .uturn: return "Make a U-turn" + onto
      case let m? where m != .straight: return "Continue \(m.rawValue)" + onto
      default: return "Continue" + onto
      }
    case .newName:
      if let m = modifier, m != .straight, m != .uturn { return "Continue \(m.rawValue)" + onto }
      return "Continue" + onto
    case .merge:
      return "Merge" + (side(modifier).map { " \($0)" } ?? "") + onto
    case .onRamp:
      return "Take the ramp" + (side(modifier).map { " on the \($0)" } ?? "") + onto
    case .offRamp:
      let toward = step.destinations.isEmpty ? "" : " toward \(step.destinations)"
      return "Take the exit" + (side(modifier).map { " on the \($0)" } ?? "") + (toward.isEmpty ? onto : toward)
    case .fork:
      return "Keep \(side(modifier) ?? "straight") at the fork" + onto
    case .roundabout, .rotary:
      let circle = maneuver.kind == .rotary && !step.rotaryName.isEmpty ? step.rotaryName : "the roundabout"
      guard let exit = maneuver.exit else { return "Enter \(circle)" + onto }
      return "Enter \(circle) and take the \(ordinal(exit)) exit" + onto
    case .roundaboutTurn:
      return "At the roundabout, turn \((modifier ?? .straight).rawValue)" + onto
    case .exitRoundabout, .exitRotary:
      return "Exit the roundabout" + onto
    }
  }

  /// The lanes a banner draws for a maneuver: those of its intersection, the usable ones used
  /// for the maneuver's direction where they show it, else for their one arrow.
  static func bannerLanes(for step: RouteStep) -> [StepInstructions.Lane] {
    guard let intersection = step.intersections.first else { return [] }
    let direction = step.maneuver.modifier?.rawValue
    return intersection.lanes.map { lane in
      let used =
        !lane.valid
        ? nil
        : direction.flatMap { lane.indications.contains($0) ? $0 : nil }
          ?? (lane.indications.count == 1 ? lane.indications[0] : nil)
      return StepInstructions.Lane(directions: lane.indications, active: lane.valid, activeDirection: used)
    }
  }

  /// What a banner shows for a maneuver: the road it leads to, else the sentence.
  static func bannerText(for step: RouteStep) -> String {
    if step.maneuver.kind == .arrive { return "Your destination" }
    if step.maneuver.kind == .offRamp, !step.destinations.isEmpty { return step.destinations }
    return wayName(step) ?? text(for: step)
  }

  /// The road's name and reference, as osrm-text-instructions joins them.
  static func wayName(_ step: RouteStep) -> String? {
    switch (step.name.isEmpty, step.ref.isEmpty) {
    case (false, false): return step.name.contains(step.ref) ? step.name : "\(step.name) (\(step.ref))"
    case (false, true): return step.name
    case (true, false): return step.ref
    case (true, true): return nil
    }
  }

  static func side(_ modifier: RouteStep.Modifier?) -> String? {
    switch modifier {
    case .left, .slightLeft, .sharpLeft: return "left"
    case .right, .slightRight, .sharpRight: return "right"
    default: return nil
    }
  }

  static func compassDirection(_ bearing: Int) -> String {
    let names = ["north", "northeast", "east", "southeast", "south", "southwest", "west", "northwest"]
    return names[Int(((Double(bearing) + 22.5) / 45).rounded(.down)) % 8]
  }

  static func ordinal(_ n: Int) -> String {
    let words = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]
    return (1...10).contains(n) ? words[n - 1] : "\(n)th"
  }

  /// A distance as said: metres to the nearest 10 (50 from 100 m), kilometres to a tenth; or
  /// feet and miles.
  public static func spokenDistance(_ metres: Double, _ units: VoiceUnits = .metric) -> String {
    switch units {
    case .metric:
      if metres < 1000 {
        let step = metres < 100 ? 10.0 : 50.0
        let value = max(step, (metres / step).rounded() * step)
        return value >= 1000 ? "1 kilometer" : "\(Int(value)) meters"
      }
      return quantity(metres / 1000, "kilometer")
    case .imperial:
      let miles = metres / 1609.344
      if miles < 0.1 {
        let feet = metres / 0.3048
        let step = feet < 100 ? 10.0 : 50.0
        return "\(Int(max(step, (feet / step).rounded() * step))) feet"
      }
      return quantity(miles, "mile")
    }
  }

  static func quantity(_ value: Double, _ unit: String) -> String {
    let tenths = value < 10 ? (value * 10).rounded() / 10 : value.rounded()
    let number = tenths == tenths.rounded() ? String(Int(tenths)) : String(format: "%.1f", tenths)
    return "\(number) \(unit)\(tenths == 1 ? "" : "s")"
  }

  static func lowercasedFirst(_ text: String) -> String {
    guard let first = text.first else { return text }
    return first.lowercased() + text.dropFirst()
  }

  /// SSML with the text's reserved characters escaped.
  static func ssml(_ text: String) -> String {
    let escaped = text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
      .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    return "<speak><prosody rate=\"1.08\">\(escaped)</prosody></speak>"
  }
}
