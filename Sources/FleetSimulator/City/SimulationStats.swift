import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Durations in logarithmic buckets (5 % wide, 0.1 ms to about 3 hours): percentiles within
/// 5 %, in constant memory however long the run.
public struct LatencyHistogram: Sendable {
  static let base = 1.05
  static let smallest = 0.0001
  var counts = [Int](repeating: 0, count: 360)
  public private(set) var count = 0
  public private(set) var sum = 0.0

  public init() {}

  public mutating func record(_ seconds: Double) {
    guard seconds.isFinite else { return }
    let index =
      seconds <= Self.smallest ? 0 : min(counts.count - 1, Int(log(seconds / Self.smallest) / log(Self.base)) + 1)
    counts[index] += 1
    count += 1
    sum += max(0, seconds)
  }

  public mutating func merge(_ other: LatencyHistogram) {
    for i in counts.indices { counts[i] += other.counts[i] }
    count += other.count
    sum += other.sum
  }

  public var mean: Double { count == 0 ? 0 : sum / Double(count) }

  /// The value below which `share` of the samples lie (a bucket's upper edge); 0 when empty.
  public func percentile(_ share: Double) -> Double {
    guard count > 0 else { return 0 }
    let rank = Int((share * Double(count)).rounded(.up))
    var seen = 0
    for (i, n) in counts.enumerated() {
      seen += n
      if seen >= max(1, rank) { return i == 0 ? Self.smallest : Self.smallest * pow(Self.base, Double(i)) }
    }
    return Self.smallest * pow(Self.base, Double(counts.count))
  }
}

/// What a simulation saw, shared by its drivers and riders: the period since the last line
/// printed and the whole run.
public final class SimulationStats: Sendable {
  public struct Figures: Sendable {
    public var reportsSent = 0
    public var reportsFailed = 0
    /// Why reports failed, by gRPC code (or error type).
    public var reportFailures: [String: Int] = [:]
    public var reportLatency = LatencyHistogram()
    public var ridesRequested = 0
    public var ridesBooked = 0
    public var ridesRefused = 0
    public var bookingLatency = LatencyHistogram()
    public var ridesAssigned = 0
    public var ridesPickedUp = 0
    public var ridesCompleted = 0
    /// Request to pickup, simulated seconds.
    public var pickupWait = LatencyHistogram()
    public var statusCallsFailed = 0
    public var metresDriven = 0.0
    public var metresEmpty = 0.0
    /// Why bookings were refused, by gRPC code.
    public var refusals: [String: Int] = [:]
    public var watchersOpened = 0
    /// A driver's report to a rider's app holding it (`SimulatedWatchers`).
    public var pushLatency = LatencyHistogram()
    /// Why watch streams failed, by gRPC code.
    public var watchFailures: [String: Int] = [:]

    mutating func merge(_ other: Figures) {
      reportsSent += other.reportsSent
      reportsFailed += other.reportsFailed
      reportFailures.merge(other.reportFailures, uniquingKeysWith: +)
      reportLatency.merge(other.reportLatency)
      ridesRequested += other.ridesRequested
      ridesBooked += other.ridesBooked
      ridesRefused += other.ridesRefused
      bookingLatency.merge(other.bookingLatency)
      ridesAssigned += other.ridesAssigned
      ridesPickedUp += other.ridesPickedUp
      ridesCompleted += other.ridesCompleted
      pickupWait.merge(other.pickupWait)
      statusCallsFailed += other.statusCallsFailed
      metresDriven += other.metresDriven
      metresEmpty += other.metresEmpty
      refusals.merge(other.refusals, uniquingKeysWith: +)
      watchersOpened += other.watchersOpened
      pushLatency.merge(other.pushLatency)
      watchFailures.merge(other.watchFailures, uniquingKeysWith: +)
    }
  }

  struct State {
    var period = Figures()
    var total = Figures()
    var onTrip = 0
    var online = 0
  }

  let state = Mutex(State())
  /// Watch streams open now, and the most open at once.
  let watching = Atomic<Int>(0)
  let watchingPeak = Atomic<Int>(0)

  func watcherOpened() {
    update { $0.watchersOpened += 1 }
    let open = watching.add(1, ordering: .relaxed).newValue
    _ = watchingPeak.max(open, ordering: .relaxed)
  }

  func watcherClosed() { watching.subtract(1, ordering: .relaxed) }

  public init() {}

  public func update(_ change: (inout Figures) -> Void) {
    state.withLock { change(&$0.period) }
  }

  func setFleet(online: Int, onTrip: Int) {
    state.withLock {
      $0.online = online
      $0.onTrip = onTrip
    }
  }

  /// The period's figures (then a new period starts) and the run's so far.
  public func takePeriod() -> (period: Figures, total: Figures) {
    state.withLock { s in
      let period = s.period
      s.total.merge(period)
      s.period = Figures()
      return (period, s.total)
    }
  }

  public var fleet: (online: Int, onTrip: Int) { state.withLock { ($0.online, $0.onTrip) } }
}

/// A process's CPU time and resident memory, read from the kernel: this process's own, or
/// another's (fleetd's, by its pid) so that each side's cost is reported apart.
public struct ProcessUsage: Sendable {
  /// User and system CPU seconds so far.
  public var cpuSeconds: Double
  public var residentBytes: Int

  /// `pid` nil: this process.
  public static func read(pid: Int32? = nil) -> ProcessUsage? {
    let path = "/proc/\(pid.map(String.init) ?? "self")"
    guard let stat = try? String(contentsOfFile: path + "/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return nil }
    // Fields after "pid (comm)": state is field 3; utime and stime are fields 14 and 15.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    var resident = 0
    if let statm = try? String(contentsOfFile: path + "/statm", encoding: .utf8) {
      let parts = statm.split(separator: " ")
      if parts.count > 1, let pages = Int(parts[1]) { resident = pages * Int(sysconf(Int32(_SC_PAGESIZE))) }
    }
    return ProcessUsage(cpuSeconds: (user + system) / ticks, residentBytes: resident)
  }
}
