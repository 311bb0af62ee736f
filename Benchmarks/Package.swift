// swift-tools-version:6.1
// Benchmarks live in their own package so that CI's build of FleetKit does not carry them.
import PackageDescription

let package = Package(
  name: "FleetKitBenchmarks",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(name: "FleetKit", path: ".."),
    .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.3"),
    .package(url: "https://github.com/grpc/grpc-swift-nio-transport.git", from: "2.9.2"),
    .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
    .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
  ],
  targets: [
    // What several benchmarks share.
    .target(name: "BenchSupport", swiftSettings: [.swiftLanguageMode(.v6)]),
    .executableTarget(
      name: "fleet-load",
      dependencies: [
        .product(name: "FleetProto", package: "FleetKit"),
        .product(name: "FleetAuth", package: "FleetKit"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOHTTP2", package: "swift-nio-http2"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "routing-bench",
      dependencies: [
        .product(name: "FleetGeometry", package: "FleetKit"),
        .product(name: "FleetRouting", package: "FleetKit"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "routing-agreement",
      dependencies: [
        .product(name: "FleetGeometry", package: "FleetKit"),
        "BenchSupport",
        .product(name: "FleetRouting", package: "FleetKit"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "routing-diff",
      dependencies: [
        .product(name: "FleetGeometry", package: "FleetKit"),
        .product(name: "FleetRouting", package: "FleetKit"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "location-bench",
      dependencies: [
        .product(name: "FleetGeometry", package: "FleetKit"),
        .product(name: "FleetPlaces", package: "FleetKit"),
        .product(name: "FleetLocation", package: "FleetKit"),
        .product(name: "FleetGeocoding", package: "FleetKit"),
        .product(name: "FleetPositioning", package: "FleetKit"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "progress-bench",
      dependencies: [
        .product(name: "FleetGeometry", package: "FleetKit"),
        .product(name: "FleetProgress", package: "FleetKit"),
        .product(name: "FleetRouting", package: "FleetKit"),
        .product(name: "FleetCore", package: "FleetKit"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "dispatch-bench",
      dependencies: [
        .product(name: "FleetGeometry", package: "FleetKit"),
        "BenchSupport",
        .product(name: "FleetCore", package: "FleetKit"),
        .product(name: "FleetRouting", package: "FleetKit"),
        .product(name: "FleetProgress", package: "FleetKit"),
        .product(name: "FleetDispatch", package: "FleetKit"),
        .product(name: "FleetStoreSQLite", package: "FleetKit"),
        .product(name: "FleetProto", package: "FleetKit"),
        .product(name: "FleetAuth", package: "FleetKit"),
        .product(name: "FleetSimulator", package: "FleetKit"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOHTTP2", package: "swift-nio-http2"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "traffic-bench",
      dependencies: [
        .product(name: "FleetGeometry", package: "FleetKit"),
        .product(name: "FleetRouting", package: "FleetKit"),
        .product(name: "FleetSimulator", package: "FleetKit"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
    .executableTarget(
      name: "grpc-floor",
      dependencies: [
        .product(name: "FleetProto", package: "FleetKit"),
        .product(name: "FleetSimulator", package: "FleetKit"),
        .product(name: "FleetGRPCTransport", package: "FleetKit"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOHTTP2", package: "swift-nio-http2"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
  ]
)
