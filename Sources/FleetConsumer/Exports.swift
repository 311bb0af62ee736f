// The Consumer SDK's public API names `FleetEndpoint`; its users should not need a second import.
@_exported import FleetClient
