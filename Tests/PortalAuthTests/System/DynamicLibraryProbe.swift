import CPortalAuthCurl  // pa_dynamic_library_probe, from Sources/CPortalAuthSystem/dynamic_library.h, which CPortalAuthCurl's shim includes
@testable import PortalAuth
@testable import PortalAuthCore

/// The loader of the libraries opened on first use (libcurl, libcrypto, libssl, libsecret), tried on any file and function:
/// what the tests check its messages with (the header's inline probe, compiled into the tests, not the library).
enum DynamicLibraryProbe {
    /// nil when `soname` loads and has `function`, else the error its loader would report. A nil `package` (or
    /// `buildPackages`) is a loader that leaves that advice to its caller, as libsecret's does.
    static func failure(soname: String, package: String?, buildPackages: String?, function: String)
        -> SystemLibraryError?
    {
        var buffer = [CChar](repeating: 0, count: 640)
        let loaded = pa_dynamic_library_probe(soname, package, buildPackages, function, &buffer, buffer.count)
        guard loaded != 1 else { return nil }
        return SystemLibraryError(
            String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}
