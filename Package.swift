// swift-tools-version:6.0
import PackageDescription

/// Strict settings applied to every Swift target in one place.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "PortalAuth",
    products: [
        .library(name: "PortalAuth", targets: ["PortalAuth"]),
        .executable(name: "portal-auth", targets: ["portal-auth"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // MARK: - C libraries (system-library targets, found through pkg-config)
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CJansson",
            pkgConfig: "jansson",
            providers: [.apt(["libjansson-dev"])]
        ),

        // MARK: - Library and tool
        .target(
            name: "PortalAuth",
            dependencies: [
                "CCurl", "COpenSSL", "CJansson",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "portal-auth",
            dependencies: [
                "PortalAuth",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),

        // MARK: - Tests
        .testTarget(
            name: "PortalAuthTests",
            dependencies: ["PortalAuth"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["PortalAuth"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
