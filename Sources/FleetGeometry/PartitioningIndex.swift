extension RandomAccessCollection {
  /// The first index whose element satisfies `isAfter`, or `endIndex` when none does, for a
  /// predicate that is false on a prefix of the collection and true on the rest (a threshold on
  /// sorted values): a binary search.
  @inlinable public func partitioningIndex(where isAfter: (Element) throws -> Bool) rethrows -> Index {
    var low = startIndex
    var count = self.count
    while count > 0 {
      let half = count / 2
      let middle = index(low, offsetBy: half)
      if try isAfter(self[middle]) {
        count = half
      } else {
        low = index(after: middle)
        count -= half + 1
      }
    }
    return low
  }
}
