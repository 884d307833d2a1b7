internal import CPortalAuthCurl
internal import CPortalAuthOpenSSL

/// A C library that PortalAuth opens on first use (libcurl, libcrypto, libssl) could not be opened.
///
/// The message names the file, the loader's reason and the Debian package that installs it, for example
/// "libcurl.so.4 could not be loaded (…: cannot open shared object file…); install the Debian package libcurl4
/// (to build portal-auth: libcurl4-openssl-dev libssl-dev)".
package struct SystemLibraryError: CategorizedError, CustomStringConvertible, Equatable {
    /// What failed and what to install.
    package let description: String

    /// A local problem: the machine lacks a package.
    package var category: ErrorCategory { .local }

    init(_ description: String) {
        self.description = description
    }
}

/// libcurl, opened with `dlopen` on first use (see `Sources/CPortalAuthSystem/dynamic_library.h`): a process that never
/// sends a request never maps it or the ~30 libraries it depends on.
package enum CurlLibrary {
    /// nil once libcurl and every function the library calls were found, else why not (tried once).
    private static let failure: SystemLibraryError? =
        pa_curl_load() == 1 ? nil : SystemLibraryError(String(cString: pa_curl_load_error()))

    /// Opens libcurl if needed; call before any `pa_curl_` function.
    package static func load() throws(SystemLibraryError) {
        if let failure { throw failure }
    }
}

/// OpenSSL's libcrypto and libssl, opened with `dlopen` on first use (see `Sources/CPortalAuthSystem/dynamic_library.h`):
/// a process that computes nothing cryptographic and makes no TLS connection never maps them.
package enum OpenSSLLibrary {
    /// nil once libcrypto and every function the library calls were found, else why not (tried once).
    private static let cryptoFailure: SystemLibraryError? =
        pa_crypto_load() == 1 ? nil : SystemLibraryError(String(cString: pa_crypto_load_error()))
    /// The same for libssl (the client-certificate callbacks that libcurl runs).
    private static let sslFailure: SystemLibraryError? =
        pa_ssl_load() == 1 ? nil : SystemLibraryError(String(cString: pa_ssl_load_error()))

    /// Opens libcrypto if needed; call before any `pa_` function of libcrypto.
    package static func loadCrypto() throws(SystemLibraryError) {
        if let cryptoFailure { throw cryptoFailure }
    }

    /// Opens libssl if needed; call before handing libcurl a callback that uses it.
    package static func loadSSL() throws(SystemLibraryError) {
        if let sslFailure { throw sslFailure }
    }
}
