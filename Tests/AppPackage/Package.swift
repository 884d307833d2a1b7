// swift-tools-version:6.1
import Foundation
import PackageDescription

// An app's package built on PortalAuth, as an app developer writes one: it depends on PortalAuth by path (this
// repository) and on the Swift server ecosystem (AsyncHTTPClient, hence SwiftNIO and swift-system), so that
// building it checks that their module names and PortalAuth's do not clash (issue 27). Its one executable,
// `library-bench`, is the client side of `scripts/bench`'s library section; it is no product of PortalAuth.
// Built by scripts/test (the compatibility check) and scripts/bench, in its own .build folder.

/// PortalAuth's package identity is the name of the folder it is checked out in (a path dependency).
let portalAuthRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
    .standardized
let portalAuthIdentity = portalAuthRoot.lastPathComponent.lowercased()

let package = Package(
    name: "AppPackage",
    dependencies: [
        .package(path: "../.."),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        .executableTarget(
            name: "library-bench",
            dependencies: [
                .product(name: "PortalAuth", package: portalAuthIdentity),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
