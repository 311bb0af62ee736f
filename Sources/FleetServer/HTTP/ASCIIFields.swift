extension StringProtocol where SubSequence == Substring {
  /// The parts between `separator`s (an ASCII byte), found byte by byte: `split` on characters
  /// walks grapheme clusters, which cost more than the rest of reading an OSRM URL. Once
  /// `maxSplits` parts are found the rest is one more; `omittingEmpty` leaves out empty parts.
  func fields(separatedBy separator: UInt8, maxSplits: Int = .max, omittingEmpty: Bool = false) -> [Substring] {
    var parts: [Substring] = []
    var start = startIndex
    var index = utf8.startIndex
    while index < utf8.endIndex, parts.count < maxSplits {
      if utf8[index] == separator {
        if !omittingEmpty || start < index { parts.append(self[start..<index]) }
        start = utf8.index(after: index)
      }
      index = utf8.index(after: index)
    }
    if !omittingEmpty || start < endIndex { parts.append(self[start..<endIndex]) }
    return parts
  }
}
