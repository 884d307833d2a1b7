// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "PortalAuth",
    products: [
        .library(name: "PortalAuth", targets: ["PortalAuth"]),
        .executable(name: "portal-auth", targets: ["portal-auth"]),
        // Test doubles for the tests of apps that use PortalAuth (as swift-log's InMemoryLogging).
        .library(name: "PortalAuthTesting", targets: ["PortalAuthTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // A plugin, not a library dependency: `swift package generate-documentation` builds the DocC catalog
        // (Sources/PortalAuth/PortalAuth.docc; scripts/test runs it). Nothing of it is linked into PortalAuth.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // MARK: - C libraries (header-only module maps; what is linked is written here and nowhere else)
        // libcurl and OpenSSL (libcrypto, libssl) are opened with dlopen on first use (CPortalAuthSystem's
        // dynamic_library.h; CurlLibrary and OpenSSLLibrary in the library), so their targets only give the headers
        // (Debian libcurl4-openssl-dev, libssl-dev, found in the compiler's default include path) and link nothing:
        // a process that never makes a request or a digest never maps them, and one where they are missing starts and
        // says which package to install.
        .systemLibrary(name: "CPortalAuthCurl", path: "Sources/CPortalAuthCurl"),
        .systemLibrary(name: "CPortalAuthOpenSSL", path: "Sources/CPortalAuthOpenSSL"),
        // jansson is linked (`link "jansson"` in its module map): every run reads the store through it. Debian
        // libjansson-dev gives the header and libjansson.so; `scripts/install` links its libjansson.a instead.
        .systemLibrary(name: "CPortalAuthJansson", path: "Sources/CPortalAuthJansson"),
        // prctl (variadic in C) for keeping secrets out of core dumps, and the one dlopen loader (dynamic_library.h);
        // glibc only, nothing to link.
        .systemLibrary(name: "CPortalAuthSystem", path: "Sources/CPortalAuthSystem"),
        // The Secret Service (desktop keyring) through libsecret-1.so.0 (Debian libsecret-1-0), opened on first use by
        // the same loader, with a time limit on every call; it declares the few glib and libsecret functions it calls,
        // so no header is needed. Linking it would load glib at every start and make the tool fail to start where
        // libsecret is missing, instead of falling back to the store file.
        .target(
            name: "CPortalAuthSecret", path: "Sources/CPortalAuthSecret",
            linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread")]),

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
                "PortalAuth", "PortalAuthCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
        ),

        // The test doubles users need (a scripted HTTP client, a manual clock), used by the unit tests too.
        .target(name: "PortalAuthTesting", dependencies: ["PortalAuth"]),

        // MARK: - Tests
        // What the test targets share (`TestServerProcess`: one way to start a server and wait for it); no product,
        // so no part of what an app gets.
        .target(name: "TestSupport", dependencies: ["PortalAuthCore"], path: "Tests/TestSupport"),
        .testTarget(
            name: "PortalAuthTests",
            dependencies: [
                "PortalAuthCore", "PortalAuthTransport", "PortalAuthStore", "PortalAuth", "PortalAuthTesting",
                "FuzzChecks", "TestSupport", "portal-auth",
            ],
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["PortalAuth", "TestSupport"],
        ),
        // An app on the public API only, run beside the tool by the integration test of store scopes (issue 45).
        .executableTarget(name: "portal-auth-test-app", dependencies: ["PortalAuth"], path: "Tests/StoreScopeApp"),
        // Code written for the ArcGIS Maps SDK for Swift, compiled against the public API only.
        .testTarget(
            name: "SDKStyleTests",
            dependencies: ["PortalAuth", "PortalAuthTesting"],
        ),
    ],
    swiftLanguageModes: [.v6]
)

// MARK: - Fuzz targets (declared only for scripts/fuzz)

/// The checks the fuzz targets run on each input, through PortalAuth's `package` API; also replayed on the committed
/// inputs by the unit test "Fuzz corpus replay" (PortalAuthTests), so always declared, but no product: `swift build`
/// builds it as a module only, and it is no part of the `PortalAuth` product.
package.targets.append(.target(name: "FuzzChecks", dependencies: ["PortalAuth"], path: "Tests/Fuzz/FuzzChecks"))

/// The libFuzzer executables, one per parser, under `Tests/Fuzz/<Target>/`: declared only when the environment has
/// `PORTAL_AUTH_FUZZ=1`, as `scripts/fuzz` sets it (with the `Fuzzing` trait and `-sanitize=fuzzer`, in its own
/// scratch path), so that neither a plain `swift build` nor a package that depends on PortalAuth builds or links
/// them. Without the trait they build as plain programs that replay the input files they are given.
let fuzzTargets = [
    "FuzzIAPConfiguration", "FuzzHostPattern", "FuzzCallbackRequest", "FuzzTokenResponse", "FuzzStoredCredential",
]
package.traits.insert(.trait(name: "Fuzzing", description: "Build the fuzz targets against libFuzzer (scripts/fuzz)."))
if Context.environment["PORTAL_AUTH_FUZZ"] == "1" {
    package.targets.append(.target(name: "FuzzSupport", path: "Tests/Fuzz/FuzzSupport"))
    for name in fuzzTargets {
        package.products.append(.executable(name: name, targets: [name]))
        package.targets.append(
            .executableTarget(name: name, dependencies: ["FuzzChecks", "FuzzSupport"], path: "Tests/Fuzz/\(name)")
        )
    }
}

// MARK: - Strict settings, applied to every Swift target in one place

for target in package.targets where target.type != .system {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"),
            .enableUpcomingFeature("InternalImportsByDefault"),
            .enableUpcomingFeature("MemberImportVisibility"),
        ]
}
