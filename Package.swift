// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "swift-deviceid",
    products: [
        .library(name: "DeviceId", targets: ["DeviceId"]),
        .library(name: "DeviceIdUserDefaults", targets: ["DeviceIdUserDefaults"]),
        .library(name: "DeviceCheck", targets: ["DeviceCheck"]),
        .library(name: "DeviceVerifier", targets: ["DeviceVerifier"]),
        .executable(name: "deviceid", targets: ["DeviceIdCommand"]),
        .library(name: "Keyring", targets: ["Keyring"]),
        .library(name: "SecureStorage", targets: ["SecureStorage"]),
        .library(name: "MainLoopIntegration", targets: ["MainLoopIntegration"]),
        // libFuzzer's driver, for the fuzz targets of deviceid-server (Server/); nothing an app needs.
        .library(name: "FuzzDriver", targets: ["FuzzDriver"]),
        // Deadline, which deviceid-server's stores bound their queries with (Server/); nothing else in it is public.
        .library(name: "Threading", targets: ["Threading"]),
        // What both packages' tests start children and daemons with (Server/ too); nothing an app needs.
        .library(name: "DeviceIdTestSupport", targets: ["DeviceIdTestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        // System libraries, found with pkg-config. C lives only here.
        .systemLibrary(
            name: "CLibSecret",
            pkgConfig: "libsecret-1",
            providers: [.apt(["libsecret-1-dev", "libglib2.0-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),

        .systemLibrary(name: "CGLib", pkgConfig: "glib-2.0", providers: [.apt(["libglib2.0-dev"])]),
        // libdispatch's entry points for a run loop of its own, which no installed header declares.
        .systemLibrary(name: "CDispatchMainQueue"),
        // Only the GTK example builds with it.
        .systemLibrary(name: "CGtk", pkgConfig: "gtk4", providers: [.apt(["libgtk-4-dev"])]),
        .systemLibrary(
            name: "CTSS2",
            pkgConfig: "tss2-esys",
            providers: [.apt(["libtss2-dev"])]
        ),

        // Every OpenSSL call, behind `package` API: AES-GCM, RSA, digests, scrypt, random bytes, one error type.
        .target(name: "OpenSSLSupport", dependencies: ["COpenSSL", "Threading"]),
        // The TPM, behind `package` API: which TPM (one reading of the environment), opening and sharing it, running
        // work on it until a deadline, keys loaded into it that survive its restart, its one error (`TPMFailure`, public:
        // every layer's `tpm` case carries it), keys sealed to it, every call of the TPM Software Stack's ESAPI
        // (endorsement certificates, attestation keys, TPM2_Certify, credential activation, sealing and ECDH in
        // encrypting sessions), and data sealed as libsecret's keyring file seals its password. The OpenSSL half of keys
        // it holds (the `tpm2` provider) is OpenSSLSupport's `TPM2Provider`, the only TPM thing there.
        .target(name: "TPMSupport", dependencies: ["CTSS2", "OpenSSLSupport", "Threading"]),

        // Under every layer: the worker threads blocking work runs on, and the locks (a lock ThreadSanitizer sees in
        // sanitized builds, and a first-come, first-served lock for async code); errors of its own.
        .target(name: "Threading"),
        // Layer 1: the Secret Service, told truthfully; where none runs, libsecret's keyring file sealed to the TPM.
        .target(name: "Keyring", dependencies: ["CLibSecret", "Threading", "TPMSupport", .product(name: "Logging", package: "swift-log")]),
        // Layer 2: Codable values in the keyring, optionally sealed with AES-256-GCM.
        .target(name: "SecureStorage", dependencies: ["Keyring", "Threading", "OpenSSLSupport", "TPMSupport"]),
        // What a server links to check a device, and nothing of the desktop: device public keys and their signatures,
        // device tokens, TPM attestations. OpenSSL only.
        .target(name: "DeviceVerifier", dependencies: ["OpenSSLSupport"]),
        // Layer 3: the device identity and the identifiers that compose with it.
        .target(
            name: "DeviceId",
            dependencies: [
                "SecureStorage", "Keyring", "Threading", "OpenSSLSupport", "TPMSupport", "DeviceVerifier",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The UserDefaults-backed identifiers: apart, because UserDefaults needs all of Foundation (and ICU),
        // which costs every other program 10 MiB and 6 ms at start.
        .target(name: "DeviceIdUserDefaults", dependencies: ["DeviceId", "Threading"]),
        // Device tokens and App Attest: the client half of DeviceCheck for Linux (the server half is DeviceVerifier, which
        // it exports).
        .target(
            name: "DeviceCheck",
            dependencies: ["DeviceId", "DeviceVerifier", "Keyring", "SecureStorage", "OpenSSLSupport", "TPMSupport", "Threading"]
        ),
        // The main actor inside a GLib main loop (GTK, GIO applications). GLib only.
        .target(name: "MainLoopIntegration", dependencies: ["CGLib", "CDispatchMainQueue"]),
        // The `deviceid` command for session scripts.
        .executableTarget(
            name: "DeviceIdCommand",
            dependencies: [
                "DeviceId", "DeviceCheck", "DeviceVerifier", "Keyring", "SecureStorage", "Threading",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Examples: each one a short, commented program (swift run NAME).
        .executableTarget(name: "QuickStart", dependencies: ["DeviceId"], path: "Examples/QuickStart"),
        .executableTarget(name: "SecureNotes", dependencies: ["SecureStorage"], path: "Examples/SecureNotes"),
        .executableTarget(name: "CustomIdentifier", dependencies: ["DeviceId", "SecureStorage"], path: "Examples/CustomIdentifier"),
        .executableTarget(name: "DeviceBinding", dependencies: ["DeviceId"], path: "Examples/DeviceBinding"),
        .executableTarget(
            name: "GtkDeviceId", dependencies: ["DeviceId", "MainLoopIntegration", "CGtk"], path: "Examples/GtkDeviceId",
            exclude: ["io.github.swift_deviceid.GtkDeviceId.desktop", "io.github.swift_deviceid.GtkDeviceId.svg"]
        ),

        // The decoders of what other processes can write, fed arbitrary bytes: by libFuzzer through DeviceIdFuzz
        // (scripts/fuzz), and by the tests through the seed corpus in Fuzz/Corpus.
        .target(name: "FuzzDriver", path: "Fuzz/FuzzDriver"),
        .target(
            name: "FuzzTargets", dependencies: ["DeviceCheck", "DeviceId", "DeviceVerifier", "FuzzDriver", "Keyring", "OpenSSLSupport", "SecureStorage"],
            path: "Fuzz/FuzzTargets"
        ),
        .executableTarget(name: "DeviceIdFuzz", dependencies: ["FuzzDriver", "FuzzTargets"], path: "Fuzz/DeviceIdFuzz"),

        // Drives a client line by line, for tests of one long-lived process beside others.
        .executableTarget(name: "KeyringFileProbe", dependencies: ["Keyring"], path: "Tests/KeyringFileProbe"),
        // A GLib main loop on the main thread with the main actor installed in it, for MainLoopTests.
        .executableTarget(name: "MainLoopProbe", dependencies: ["MainLoopIntegration", "CGLib"], path: "Tests/MainLoopProbe"),

        // Benchmarks are executables, never part of `swift test`.
        .executableTarget(
            name: "DeviceIdBenchmarks",
            dependencies: ["Keyring", "SecureStorage", "DeviceId", "DeviceCheck", "CLibSecret", "DeviceIdTestSupport"],
            path: "Benchmarks/DeviceIdBenchmarks"
        ),

        // What tests start: children (one posix_spawn wrapper), private D-Bus buses with each provider, a software
        // TPM, PostgreSQL, a sandbox, an X server; the server's tests use it too.
        .target(
            name: "DeviceIdTestSupport",
            dependencies: ["Keyring", "DeviceVerifier", "OpenSSLSupport", "CLibSecret", "Threading", .product(name: "Logging", package: "swift-log")],
            path: "Tests/DeviceIdTestSupport",
            exclude: ["Fixtures"]
        ),
        // Each module's tests beside it.
        .testTarget(name: "ThreadingTests", dependencies: ["Threading"]),
        .testTarget(name: "KeyringTests", dependencies: ["Keyring", "TPMSupport", "DeviceIdTestSupport", "Threading"]),
        .testTarget(
            name: "SecureStorageTests",
            dependencies: ["SecureStorage", "Keyring", "OpenSSLSupport", "DeviceIdTestSupport"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "OpenSSLSupportTests", dependencies: ["OpenSSLSupport", "DeviceIdTestSupport"]),
        .testTarget(name: "TPMSupportTests", dependencies: ["TPMSupport", "OpenSSLSupport", "Threading", "DeviceIdTestSupport"]),
        // On fixtures made once by a software TPM and the release command (Fixtures/make-fixtures): no keyring, bus or TPM.
        .testTarget(name: "DeviceVerifierTests", dependencies: ["DeviceVerifier", "OpenSSLSupport"], resources: [.copy("Fixtures")]),
        .testTarget(
            name: "DeviceIdTests",
            dependencies: [
                "DeviceId", "SecureStorage", "Keyring", "OpenSSLSupport", "DeviceIdTestSupport", .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "DeviceIdUserDefaultsTests", dependencies: ["DeviceIdUserDefaults", "DeviceId", "SecureStorage", "Keyring", "DeviceIdTestSupport"]),
        // CTSS2: the forgery tests speak to the TPM as a hostile device owner would (TPM2_LoadExternal).
        .testTarget(
            name: "DeviceCheckTests",
            dependencies: [
                "DeviceCheck", "DeviceVerifier", "DeviceId", "SecureStorage", "Keyring", "OpenSSLSupport", "TPMSupport", "CTSS2", "DeviceIdTestSupport",
            ]
        ),
        .testTarget(name: "MainLoopIntegrationTests", dependencies: ["DeviceIdTestSupport"]),
        .testTarget(name: "DeviceIdCommandTests", dependencies: ["DeviceId", "Keyring", "SecureStorage", "DeviceIdTestSupport"]),
        .testTarget(name: "FuzzTargetsTests", dependencies: ["DeviceVerifier", "FuzzDriver", "FuzzTargets"]),
    ],
    swiftLanguageModes: [.v6]
)
