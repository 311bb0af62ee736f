// RetryBackoff and the fleetd endpoint are part of this module's API (LocationService, GeoServiceClient).
@_exported import FleetClient
