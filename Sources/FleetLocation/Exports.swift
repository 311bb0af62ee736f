// The location service's public API names `RetryBackoff`, `FleetEndpoint`, `LatLng` and `Address`; its users
// should not need more imports.
@_exported import FleetClient
@_exported import FleetGeometry
@_exported import FleetPlaces
