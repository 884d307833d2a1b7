// swift-tools-version:6.1
import Foundation
import PackageDescription

// An app's package built on PortalAuth, as an app developer writes one: it depends on PortalAuth by path (this
// building it checks that their module names and PortalAuth's do not clash (issue 27). Its one executable,
// `library-bench`, is the client side of `scripts/bench`'s library section; it is no product of PortalAuth.
// Built by scripts/test (the compatibility check) and scripts/bench, in its own .build folder.

/// PortalAuth's package identity is the name of the folder it is checked out in (a path dependency).
let portalAuthRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized
let portalAuthIdentity = portalAuthRoot.lastPathComponent.lowercased()

let package = Package(
    name: "AppPackage",
    dependencies: [
        .package(path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "library-bench",
            dependencies: [
                .product(name: "PortalAuth", package: portalAuthIdentity),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
