// The SDK's public API names `FleetEndpoint` and `LatLng`; its users should not need more imports.
@_exported import FleetClient
@_exported import FleetGeometry
