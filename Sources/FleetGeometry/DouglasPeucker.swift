/// Douglas–Peucker line simplification, over any kind of point: which points of a line to keep
/// so that none dropped lies farther than `tolerance` from the line through the kept points
/// around it. The ends are always kept. `offset(i, first, last)` is how far point `i` lies from
/// the line through points `first` and `last`, in the tolerance's unit.
public enum DouglasPeucker {
  public static func kept(count: Int, tolerance: Double, offset: (Int, Int, Int) -> Double) -> [Int] {
    guard count > 2 else { return Array(0..<count) }
    var keep = [Bool](repeating: false, count: count)
    keep[0] = true
    keep[count - 1] = true
    var stack = [(0, count - 1)]
    while let (first, last) = stack.popLast() {
      guard last - first > 1 else { continue }
      var farthest = first
      var farthestDistance = 0.0
      for i in (first + 1)..<last {
        let d = offset(i, first, last)
        if d > farthestDistance {
          farthest = i
          farthestDistance = d
        }
      }
      if farthestDistance > tolerance {
        keep[farthest] = true
        stack.append((first, farthest))
        stack.append((farthest, last))
      }
    }
    return keep.indices.filter { keep[$0] }
  }
}
