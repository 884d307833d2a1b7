internal import CPortalAuthOpenSSL

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
    static func loadCrypto() throws(SystemLibraryError) {
        if let cryptoFailure { throw cryptoFailure }
    }

    /// Opens libssl if needed; call before handing libcurl a callback that uses it.
    package static func loadSSL() throws(SystemLibraryError) {
        if let sslFailure { throw sslFailure }
    }
}
