// swift-tools-version:6.1
import PackageDescription

// One settings list for every target (STYLE.md, "Layout").
let swiftSettings: [SwiftSetting] = [
  .swiftLanguageMode(.v6),
  .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
  name: "FleetKit",
  platforms: [.macOS(.v15), .iOS(.v18)],
  products: [
    .executable(name: "fleetd", targets: ["fleetd"]),
    .library(name: "FleetGeometry", targets: ["FleetGeometry"]),
    .library(name: "FleetPlaces", targets: ["FleetPlaces"]),
    .library(name: "FleetCore", targets: ["FleetCore"]),
    .library(name: "FleetAuth", targets: ["FleetAuth"]),
    .library(name: "FleetStoreCore", targets: ["FleetStoreCore"]),
    .library(name: "FleetStoreSQLite", targets: ["FleetStoreSQLite"]),
    .library(name: "FleetStorePostgres", targets: ["FleetStorePostgres"]),
    .library(name: "FleetProto", targets: ["FleetProto"]),
    .library(name: "FleetSimulator", targets: ["FleetSimulator"]),
    .library(name: "FleetServer", targets: ["FleetServer"]),
    .library(name: "FleetGRPCTransport", targets: ["FleetGRPCTransport"]),
    .library(name: "FleetRouting", targets: ["FleetRouting"]),
    .library(name: "FleetProgress", targets: ["FleetProgress"]),
    .library(name: "FleetPositioning", targets: ["FleetPositioning"]),
    .library(name: "FleetDriver", targets: ["FleetDriver"]),
    .library(name: "FleetConsumer", targets: ["FleetConsumer"]),
    .library(name: "FleetGeocoding", targets: ["FleetGeocoding"]),
    .library(name: "FleetLocation", targets: ["FleetLocation"]),
    .library(name: "FleetRideStatus", targets: ["FleetRideStatus"]),
    .library(name: "FleetRideStatusClient", targets: ["FleetRideStatusClient"]),
    .library(name: "FleetDispatch", targets: ["FleetDispatch"]),
    .library(name: "FleetMap", targets: ["FleetMap"]),
    .executable(name: "fleet", targets: ["fleet"]),
  ],
  dependencies: [
    .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.3"),
    .package(url: "https://github.com/grpc/grpc-swift-nio-transport.git", from: "2.9.2"),
    .package(url: "https://github.com/grpc/grpc-swift-protobuf.git", from: "2.4.1"),
    .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
    .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
    .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
    .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
    .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
    .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
  ],
  targets: [
    // The domain, by folder: Model, Rules, Engine (state and write path), Operations (one file per
    // resource), Ports (what it needs from outside). No transport.
    .target(name: "FleetCore", dependencies: ["FleetGeometry"], swiftSettings: swiftSettings),
    // The floor every layer stands on: coordinates, distances, polylines, measured paths.
    .target(name: "FleetGeometry", swiftSettings: swiftSettings),
    // Addresses and places: what the geocoding engine finds and what apps show (no engine).
    .target(name: "FleetPlaces", dependencies: ["FleetGeometry"], swiftSettings: swiftSettings),
    // JWT verification and signing keys (Fleet Engine's service-account tokens).
    .target(
      name: "FleetAuth",
      dependencies: ["FleetGeometry", 
        "FleetCore",
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "_CryptoExtras", package: "swift-crypto"),
      ],
      swiftSettings: swiftSettings
    ),
    // What every store shares: the row format, encoded changes, group commit, the change-log
    // follower.
    .target(name: "FleetStoreCore", dependencies: ["FleetGeometry", "FleetCore"], swiftSettings: swiftSettings),
    // The embedded default store: SQLite through GRDB.
    .target(
      name: "FleetStoreSQLite",
      dependencies: [
        "FleetCore", "FleetStoreCore",
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: swiftSettings
    ),
    // The shared store for several fleetd instances: PostgreSQL through postgres-nio.
    .target(
      name: "FleetStorePostgres",
      dependencies: [
        "FleetCore", "FleetStoreCore",
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: swiftSettings
    ),
    // Generated protobuf and gRPC code only; regenerate with dev/generate-protos.sh.
    .target(
      name: "FleetProto",
      dependencies: [
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
      ],
      exclude: ["README.md"],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    // Generated code only: the OpenStreetMap PBF format; regenerate with dev/generate-protos.sh.
    .target(
      name: "OSMProto",
      dependencies: [.product(name: "SwiftProtobuf", package: "swift-protobuf")],
      exclude: ["README.md"],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    // The system zlib (Debian: zlib1g-dev), for the compressed blocks of OSM PBF files.
    .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
    // Road network from OpenStreetMap, routes, ETAs, matrices, snapping and map matching.
    .target(
      name: "FleetRouting",
      dependencies: ["FleetGeometry", "OSMProto", "CZlib", .product(name: "SwiftProtobuf", package: "swift-protobuf")],
      swiftSettings: swiftSettings
    ),
    // Map tiles drawn from the road graph and the extract's water and green areas (SVG).
    .target(name: "FleetMap", dependencies: ["FleetGeometry", "FleetRouting"], swiftSettings: swiftSettings),
    // The dispatcher: batched (or greedy) assignment of booked rides to vehicles. The domain
    // never depends on it.
    .target(
      name: "FleetDispatch",
      dependencies: ["FleetCore", "FleetGeometry", .product(name: "Logging", package: "swift-log")],
      swiftSettings: swiftSettings),
    // Live trip progress: road snapping, routes and ETAs per vehicle, learned traffic.
    .target(name: "FleetProgress", dependencies: ["FleetCore", "FleetGeometry", "FleetRouting"], swiftSettings: swiftSettings),
    // Location sources for the SDKs: fixes, GPX/NMEA replay, gpsd, Core Location on Apple
    // platforms.
    .target(
      name: "FleetPositioning",
      dependencies: [ 
        "FleetGeometry",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
      ],
      swiftSettings: swiftSettings
    ),
    // What every client library needs to reach fleetd: its address, the gRPC connection, the
    // HTTP client, tokens, the one error type, retry backoff.
    .target(
      name: "FleetClient",
      dependencies: [
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
      ],
      swiftSettings: swiftSettings
    ),
    // The Driver SDK: the vehicle reporter, its location stream, offline backlog.
    .target(
      name: "FleetDriver",
      dependencies: [
        "FleetClient", "FleetCore", "FleetGeometry", "FleetPositioning", "FleetProto",
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      swiftSettings: swiftSettings
    ),
    // The Consumer SDK: trip models with subscribers, push or polling, recovery, and the
    // journey-sharing map state.
    .target(
      name: "FleetConsumer",
      dependencies: [
        "FleetClient", "FleetCore", "FleetGeometry", "FleetProto",
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      swiftSettings: swiftSettings
    ),
    // Offline geocoding from OpenStreetMap and GeoNames: reverse geocoding and place search
    // (SQLite FTS5). One engine behind fleetd's geo endpoints and the location service.
    .target(
      name: "FleetGeocoding",
      dependencies: [
        "FleetCore", "FleetGeometry", "FleetPlaces", "FleetRouting", .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: swiftSettings),
    // The location service: filtered fixes, the current location and its address,
    // WGS-84/GCJ-02/BD-09, the client of fleetd's geo endpoints.
    .target(
      name: "FleetLocation", dependencies: ["FleetGeometry", "FleetPlaces", "FleetPositioning", "FleetClient"],
      swiftSettings: swiftSettings),
    // Live ride status for voice assistants and maps apps (SiriKit's ride-status rules): the
    // model, the mapping from trips, the validator, the updater; INRideStatus where Intents is.
    .target(name: "FleetRideStatus", dependencies: ["FleetGeometry", "FleetCore"], swiftSettings: swiftSettings),
    // The ride-status updater's source in apps: fleetd's :rideStatus and :watchRideStatus
    // (server-sent events) with the rider's trip token.
    .target(
      name: "FleetRideStatusClient", dependencies: ["FleetRideStatus", "FleetClient"], swiftSettings: swiftSettings),
    // Simulated drivers on the Driver SDK (`fleet drive`): road routes, trip statuses, the
    // simulated car and road-snapped location providers; local token signing for tools.
    .target(
      name: "FleetSimulator",
      dependencies: ["FleetClient", "FleetGRPCTransport",
        "FleetDriver", "FleetPositioning", "FleetRouting", "FleetProgress", "FleetAuth", "FleetCore", "FleetGeometry",
        "FleetProto",
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
        .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
      ],
      swiftSettings: swiftSettings
    ),
    // Client-side tools: `fleet drive`, `fleet ride`, `fleet track`, `fleet ride-status`, `fleet geo`.
    .executableTarget(
      name: "fleet",
      dependencies: ["FleetGeometry", "FleetPlaces", 
        "FleetSimulator", "FleetDriver", "FleetConsumer", "FleetLocation", "FleetGeocoding", "FleetRouting", "FleetAuth",
        "FleetCore", "FleetRideStatus", "FleetRideStatusClient", "FleetClient", "FleetProto",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
      ],
      swiftSettings: swiftSettings
    ),
    // gRPC's server transport on HTTP/2 frames, for grpc-swift's GRPCServer.
    .target(
      name: "FleetGRPCTransport",
      dependencies: [
        "CZlib",
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOHTTP2", package: "swift-nio-http2"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
      ],
      swiftSettings: swiftSettings
    ),
    // The request gate, gRPC services, REST routes (Fleet Engine's /v1, FleetKit's /fleetkit/v1),
    // the location stream, OSRM's API, geo endpoints, key certificates, pages, the route table
    // (405, CORS); the daemon builder.
    .target(
      name: "FleetServer",
      dependencies: ["FleetClient", "FleetGeometry", "FleetPlaces", 
        "FleetCore", "FleetAuth", "FleetStoreSQLite", "FleetStorePostgres", "FleetProto", "FleetRouting", "FleetProgress",
        "FleetGeocoding", "FleetRideStatus", "FleetDispatch", "FleetMap", "FleetGRPCTransport",
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdCore", package: "hummingbird"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOExtras", package: "swift-nio-extras"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
        .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "Prometheus", package: "swift-prometheus"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "UnixSignals", package: "swift-service-lifecycle"),
      ],
      // The web pages and the journey-sharing library, served as files.
      resources: [.copy("Web/Assets")],
      swiftSettings: swiftSettings
    ),
    // `fleetd demo`: fleetd, simulated drivers and riders in one process.
    .target(
      name: "FleetDemo",
      dependencies: ["FleetGeometry", 
        "FleetServer", "FleetSimulator", "FleetAuth", "FleetClient", "FleetCore", "FleetDispatch", "FleetProto",
        "FleetRouting",
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      swiftSettings: swiftSettings),
    .executableTarget(
      name: "fleetd",
      dependencies: ["FleetSimulator", "FleetGeometry",
        "FleetServer", "FleetAuth", "FleetStorePostgres", "FleetCore", "FleetRouting", "FleetDispatch",
        "FleetDemo",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
      ],
      swiftSettings: swiftSettings
    ),
    .testTarget(name: "FleetCoreTests", dependencies: ["FleetStoreCore", "FleetGeometry", "FleetCore"], swiftSettings: swiftSettings),
    .testTarget(
      name: "FleetMapTests", dependencies: ["FleetGeometry", "FleetMap", "FleetRouting", "FleetCore", "FleetTestSupport"],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "FleetDispatchTests",
      dependencies: ["FleetGeometry", 
        "fleet",  // built before the tests: `fleet ride` and `fleet drive` run as processes
        "FleetDispatch", "FleetCore", "FleetStoreSQLite", "FleetStorePostgres", "FleetTestSupport", "FleetAuth",
        "FleetProto",
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
      ],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "FleetRoutingTests", dependencies: ["FleetGeometry", "FleetRouting", "FleetCore", "FleetTestSupport"],
      exclude: ["Rules"], swiftSettings: swiftSettings),
    .testTarget(
      name: "FleetProgressTests",
      dependencies: ["FleetGeometry", "FleetProgress", "FleetRouting", "FleetCore", "FleetStoreSQLite", "FleetTestSupport"], swiftSettings: swiftSettings),
    .testTarget(
      name: "FleetSimulatorTests",
      dependencies: ["FleetAuth", "FleetClient", "FleetCore", "FleetDispatch", "FleetSimulator", "FleetPositioning", "FleetRouting", "FleetGeometry", "FleetProto", "FleetTestSupport",
        .product(name: "SwiftProtobuf", package: "swift-protobuf")],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "FleetPositioningTests",
      dependencies: ["FleetGeometry", 
        "FleetPositioning", "FleetTestSupport",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
      ],
      swiftSettings: swiftSettings),
    // Test helpers: the one in-process fleetd harness, the one process runner, PostgreSQL
    // clusters, the Monaco graph, map fixtures.
    .target(
      name: "FleetTestSupport",
      dependencies: ["FleetGeometry", 
        "FleetServer", "FleetAuth", "FleetCore", "FleetProto", "FleetRouting", "FleetClient", "FleetGeocoding",
        "FleetDispatch",
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "Tests/FleetTestSupport",
      swiftSettings: swiftSettings),
    .testTarget(
      name: "FleetRideStatusTests",
      dependencies: ["FleetGeometry", 
        "fleet",  // built before the tests: `fleet ride-status` and `fleet drive` run as processes
        "FleetRideStatus", "FleetRideStatusClient", "FleetConsumer", "FleetCore", "FleetTestSupport",
        "FleetAuth",
      ],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "FleetGeocodingTests", dependencies: ["FleetGeometry", "FleetPlaces", "FleetGeocoding", "FleetCore", "FleetTestSupport"],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "FleetLocationTests",
      dependencies: ["FleetGeometry", "FleetPlaces", 
        "fleet",  // built before the tests: `fleet geo` runs as a process
        "FleetLocation", "FleetGeocoding", "FleetPositioning", "FleetCore", "FleetTestSupport",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
      ],
      exclude: ["Fixtures"], swiftSettings: swiftSettings),
    .testTarget(
      name: "FleetConsumerTests",
      dependencies: ["FleetGeometry", 
        "fleet",  // built before the tests: `fleet track` and `fleet drive` run as processes
        "FleetConsumer", "FleetTestSupport", "FleetSimulator", "FleetAuth", "FleetCore", "FleetProto",
        "FleetRouting",
        .product(name: "GRPCCore", package: "grpc-swift-2"),
      ],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "FleetDriverTests",
      dependencies: ["FleetGeometry", 
        "FleetTestSupport", "FleetDriver", "FleetPositioning", "FleetSimulator", "FleetServer", "FleetAuth", "FleetCore", "FleetProto",
        "FleetRouting",
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "FleetStoreTests",
      dependencies: ["FleetGeometry", 
        "FleetStoreSQLite", "FleetStoreCore", "FleetStorePostgres", "FleetCore", "FleetTestSupport",
        .product(name: "GRDB", package: "GRDB.swift"),
      ],
      swiftSettings: swiftSettings),
    .testTarget(
      name: "FleetGRPCTransportTests",
      dependencies: [
        "FleetGRPCTransport", "FleetProto", "CZlib",
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOHTTP2", package: "swift-nio-http2"),
      ],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "FleetServerTests",
      dependencies: ["FleetGeometry", 
        "FleetRouting",
        "fleetd",  // built before the tests: the conformance suite runs the real binary
        "FleetServer", "FleetProto", "FleetAuth", "FleetStoreSQLite", "FleetCore", "FleetTestSupport", "FleetDispatch",
        "FleetGeocoding", "FleetGRPCTransport", "CZlib",
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
        .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      swiftSettings: swiftSettings
    ),
  ]
)
