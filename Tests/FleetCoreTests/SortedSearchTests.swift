import FleetCore
import FleetGeometry
import Testing

@Suite("Sorted search")
struct SortedSearchTests {
  @Test func partitioningIndexFindsTheFirstElementPastTheThreshold() {
    let along: [Double] = [0, 10, 10, 25, 40]
    #expect(along.partitioningIndex { $0 > 10 } == 3)
    #expect(along.partitioningIndex { $0 >= 10 } == 1)
    #expect(along.partitioningIndex { $0 > -1 } == 0)
    #expect(along.partitioningIndex { $0 > 40 } == along.endIndex)
    #expect([Double]().partitioningIndex { $0 > 0 } == 0)
    // Every threshold agrees with a linear scan, on a slice too.
    let slice = along[1...]
    for threshold in stride(from: -5.0, through: 45, by: 2.5) {
      #expect(along.partitioningIndex { $0 > threshold } == along.firstIndex { $0 > threshold } ?? along.endIndex)
      #expect(slice.partitioningIndex { $0 > threshold } == slice.firstIndex { $0 > threshold } ?? slice.endIndex)
    }
  }
}
