/// The versions of the C libraries PortalAuth opens on first use, for `--version` and bug reports.
///
/// Asking opens the library (nothing else does until a request or a cryptographic operation needs it).
public enum SystemLibraries {
    /// libcurl's version line (`curl_version()`, for example "libcurl/7.88.1 OpenSSL/3.0.15 zlib/1.2.13 …").
    public static func curlVersion() throws(SystemLibraryError) -> String {
        try CurlLibrary.load()
        return CurlLibrary.version
    }

    /// OpenSSL's version line (`OpenSSL_version(OPENSSL_VERSION)`, for example "OpenSSL 3.0.15 3 Sep 2024").
    public static func openSSLVersion() throws(SystemLibraryError) -> String {
        try OpenSSLLibrary.loadCrypto()
        return OpenSSLLibrary.version
    }
}
