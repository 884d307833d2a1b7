internal import CPortalAuthCurl

/// libcurl, opened with `dlopen` on first use (see `Sources/CPortalAuthSystem/dynamic_library.h`): a process that never
/// sends a request never maps it or the ~30 libraries it depends on.
package enum CurlLibrary {
    /// nil once libcurl and every function the library calls were found, else why not (tried once).
    private static let failure: SystemLibraryError? = pa_curl_load() == 1 ? nil : SystemLibraryError(String(cString: pa_curl_load_error()))

    /// Opens libcurl if needed; call before any `pa_curl_` function.
    package static func load() throws(SystemLibraryError) {
        if let failure { throw failure }
    }
}
