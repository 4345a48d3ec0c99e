// swift-tools-version:6.2
import Foundation
import PackageDescription

// A path dependency is known by its directory's name, whatever the checkout is called.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// deviceid-server: DeviceCheck's server half. A package of its own, so an app that depends on swift-deviceid
// never fetches or builds the server's dependencies.
let package = Package(
    name: "deviceid-server",
    products: [
        .executable(name: "deviceid-server", targets: ["ServerCommand"]),
    ],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0", traits: []),
        .package(url: "https://github.com/vapor/sqlite-nio", from: "1.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.34.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
    ],
    targets: [
        // The server: its configuration and application (Application), the endpoints (Controllers), App Attest
        // (AppAttest), connections' deadlines and telemetry (Connections), team JWTs (Teams), device tokens and TPM
        // trust (Tokens), and a store per concern over one database (Stores).
        .target(
            name: "DeviceIdServer",
            dependencies: [
                .product(name: "DeviceVerifier", package: root),
                .product(name: "Threading", package: root),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                // Its locks, which ThreadSanitizer sees (a Synchronization.Mutex it does not, on Linux).
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // The `deviceid-server` command: serve, team add/list/remove.
        .executableTarget(
            name: "ServerCommand",
            dependencies: [
                "DeviceIdServer",
                .product(name: "DeviceVerifier", package: root),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // What the server reads from a team's backend, fed arbitrary bytes: by libFuzzer through DeviceIdServerFuzz
        // (scripts/fuzz), and by the tests through the seed corpus in Fuzz/Corpus.
        .target(
            name: "ServerFuzzTargets",
            dependencies: [
                "DeviceIdServer", .product(name: "DeviceVerifier", package: root), .product(name: "FuzzDriver", package: root),
                .product(name: "DeviceIdTestSupport", package: root),
            ],
            path: "Fuzz/ServerFuzzTargets"
        ),
        .executableTarget(
            name: "DeviceIdServerFuzz", dependencies: ["ServerFuzzTargets", .product(name: "FuzzDriver", package: root)],
            path: "Fuzz/DeviceIdServerFuzz"
        ),
        .testTarget(
            name: "DeviceIdServerTests",
            dependencies: [
                "DeviceIdServer", "ServerFuzzTargets",
                .product(name: "DeviceCheck", package: root),
                .product(name: "DeviceVerifier", package: root),
                .product(name: "DeviceId", package: root),
                .product(name: "DeviceIdTestSupport", package: root),
                .product(name: "FuzzDriver", package: root),
                .product(name: "Keyring", package: root),
                .product(name: "SecureStorage", package: root),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
            ],
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
