// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "PortalAuth",
    products: [
        .library(name: "PortalAuth", targets: ["PortalAuth"]),
        .executable(name: "portal-auth", targets: ["portal-auth"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // MARK: - C libraries (system-library targets, found through pkg-config)
        .systemLibrary(
            name: "CPortalAuthCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CPortalAuthOpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CPortalAuthJansson",
            pkgConfig: "jansson",
            providers: [.apt(["libjansson-dev"])]
        ),
        // prctl (variadic in C) for keeping secrets out of core dumps; glibc only, nothing to link.
        .systemLibrary(name: "CPortalAuthSystem", path: "Sources/CPortalAuthSystem"),
        // The Secret Service (desktop keyring) through libsecret-1.so.0 (Debian libsecret-1-0; libsecret-1-dev for
        // its headers), loaded with dlopen on first use: linking it would load glib at every start and make the tool
        // fail to start where libsecret is missing, instead of falling back to the store file.
        .target(name: "CPortalAuthSecret", path: "Sources/CPortalAuthSecret", linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread")]),

        // MARK: - Library and tool
        // The library's layers are targets, lowest first (README, "How it is built"): a target uses only the ones
        // before it, through `package` access, so the compiler refuses an upward reference. Users import only
        // `PortalAuth`, which re-exports the others (Sources/PortalAuth/Exports.swift).
        .target(
            name: "PortalAuthCore",
            dependencies: ["CPortalAuthCurl", "CPortalAuthOpenSSL", "CPortalAuthJansson", "CPortalAuthSystem"],
        ),
        .target(
            name: "PortalAuthTransport",
            dependencies: ["PortalAuthCore", "CPortalAuthCurl", "CPortalAuthOpenSSL", "CPortalAuthSystem"],
        ),
        .target(
            name: "PortalAuthStore",
            dependencies: [
                "PortalAuthCore", "PortalAuthTransport", "CPortalAuthSecret",
                .product(name: "Logging", package: "swift-log"),
            ],
        ),
        .target(
            name: "PortalAuth",
            dependencies: [
                "PortalAuthCore", "PortalAuthTransport", "PortalAuthStore", "CPortalAuthSystem",
                .product(name: "Logging", package: "swift-log"),
            ],
        ),
        .executableTarget(
            name: "portal-auth",
            dependencies: [
                "PortalAuth",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
        ),

        // MARK: - Tests
        .testTarget(
            name: "PortalAuthTests",
            dependencies: ["PortalAuthCore", "PortalAuthTransport", "PortalAuthStore", "PortalAuth", "FuzzChecks"],
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["PortalAuth"],
        ),
        // Code written for the ArcGIS Maps SDK for Swift, compiled against the public API only.
        .testTarget(
            name: "SDKStyleTests",
            dependencies: ["PortalAuth"],
        ),
    ],
    swiftLanguageModes: [.v6]
)

// MARK: - Fuzz targets (built with the Fuzzing trait by scripts/fuzz)

/// The libFuzzer executables, one per parser, under `Tests/Fuzz/<Target>/`. Always declared; without the `Fuzzing`
/// trait they build as plain programs that replay the input files they are given, and `scripts/fuzz` builds them with
/// `--traits Fuzzing` and `-sanitize=fuzzer`, whose runtime then drives them. The checks they run on each input
/// (`FuzzChecks`, shared with the unit test that replays the committed inputs) reach the parsers through PortalAuth's
/// `package` API and are no part of the `PortalAuth` product.
let fuzzTargets = [
    "FuzzIAPConfiguration", "FuzzHostPattern", "FuzzCallbackRequest", "FuzzTokenResponse", "FuzzStoredCredential",
]
package.traits.insert(.trait(name: "Fuzzing", description: "Build the fuzz targets against libFuzzer (scripts/fuzz)."))
package.targets.append(.target(name: "FuzzSupport", path: "Tests/Fuzz/FuzzSupport"))
package.targets.append(.target(name: "FuzzChecks", dependencies: ["PortalAuth"], path: "Tests/Fuzz/FuzzChecks"))
for name in fuzzTargets {
    package.products.append(.executable(name: name, targets: [name]))
    package.targets.append(
        .executableTarget(name: name, dependencies: ["FuzzChecks", "FuzzSupport"], path: "Tests/Fuzz/\(name)")
    )
}

// MARK: - Strict settings, applied to every Swift target in one place

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("InternalImportsByDefault"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
}
