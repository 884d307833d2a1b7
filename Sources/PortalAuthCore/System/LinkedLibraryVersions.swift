internal import CPortalAuthCurl
internal import CPortalAuthOpenSSL

/// The versions of the C libraries the running process uses (not the ones it was built against), for
/// `portal-auth --version` and bug reports.
///
/// The one place that asks libcurl and OpenSSL for them; both are opened here on first use (`CurlLibrary`,
/// `OpenSSLLibrary`), and a library that cannot be opened is named with the reason and the package to install.
package enum LinkedLibraryVersions {
    /// "libcurl 7.88.1 (OpenSSL/3.0.15), OpenSSL 3.0.15 3 Sep 2024".
    package static func description() -> String {
        "libcurl \(curl()), \(openSSL())"
    }

    /// libcurl's version and TLS backend, from `curl_version_info`.
    package static func curl() -> String {
        // CURLVERSION_NOW is a macro Swift does not import; the version and TLS fields exist from the first age on.
        do {
            try CurlLibrary.load()
        } catch {
            return "unavailable: \(error)"
        }
        guard let info = pa_curl_version_info(CURLVERSION_FIRST) else { return "unknown" }
        let version = info.pointee.version.map { String(cString: $0) } ?? "unknown"
        let ssl = info.pointee.ssl_version.map { " (\(String(cString: $0)))" } ?? ""
        return version + ssl
    }

    /// OpenSSL's version text, from `OpenSSL_version(OPENSSL_VERSION)`.
    package static func openSSL() -> String {
        do {
            try OpenSSLLibrary.loadCrypto()
        } catch {
            return "OpenSSL unavailable: \(error)"
        }
        guard let text = pa_OpenSSL_version(OPENSSL_VERSION) else { return "OpenSSL unknown" }
        return String(cString: text)
    }
}
