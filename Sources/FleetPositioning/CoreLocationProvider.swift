import FleetGeometry

#if canImport(CoreLocation)
  import CoreLocation
  import FleetGeometry
  import Foundation

  /// Fixes from Core Location on Apple platforms (iOS, macOS), with the accuracy and distance
  /// filter asked for. Authorization is the app's to request; a denial ends the sequence with
  /// `LocationError.denied`.
  @available(macOS 15, iOS 18, watchOS 11, *)
  public struct CoreLocationProvider: LocationProvider {
    public init() {}

    public func fixes() -> AsyncThrowingStream<LocationFix, any Error> {
      let (stream, continuation) = AsyncThrowingStream.makeStream(
        of: LocationFix.self, bufferingPolicy: .bufferingNewest(16))
      let reader = Task {
        do {
          for try await update in CLLocationUpdate.liveUpdates() {
            if update.authorizationDenied {
              throw LocationError(.denied, "location access is denied")
            }
            guard let location = update.location else { continue }
            continuation.yield(LocationFix(location))
          }
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in reader.cancel() }
      return stream
    }
  }

  extension LocationFix {
    /// A Core Location fix; negative accuracies, course and speed mean "unknown" there.
    public init(_ location: CLLocation) {
      self.init(
        coordinate: LatLng(latitude: location.coordinate.latitude, longitude: location.coordinate.longitude),
        horizontalAccuracy: location.horizontalAccuracy >= 0 ? location.horizontalAccuracy : nil,
        altitude: location.verticalAccuracy >= 0 ? location.altitude : nil,
        verticalAccuracy: location.verticalAccuracy >= 0 ? location.verticalAccuracy : nil,
        heading: location.course >= 0 ? location.course : nil,
        headingAccuracy: location.courseAccuracy >= 0 ? location.courseAccuracy : nil,
        speed: location.speed >= 0 ? location.speed : nil,
        speedAccuracy: location.speedAccuracy >= 0 ? location.speedAccuracy : nil,
        time: location.timestamp, sensor: .coreLocation)
    }
  }
#endif
