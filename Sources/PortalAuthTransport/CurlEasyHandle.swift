internal import CPortalAuthCurl
import Foundation
import PortalAuthCore

/// One libcurl easy handle with its error buffer and header list, freed in `deinit`.
///
/// Every `CURLcode` is checked where it is returned and turned into a `TransportError` carrying libcurl's
/// own message (`CURLOPT_ERRORBUFFER`, else `curl_easy_strerror`). A handle is used on one thread at a time: set up
/// on the caller's, then run by the loop thread (`CurlMultiLoop`) or a thread of the blocking pool.
final class CurlEasyHandle {
    private let handle: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// The request's URL, named in errors once redacted (only then: redacting costs more than a request's set-up).
    private var requestURL: URL?

    /// The URL as errors name it.
    var url: RedactedURL? { requestURL.map(RedactedURL.init) }
    /// Whether the event loop keeps the handle for a next request once its transfer is done (set for the handles
    /// it hands out; one made elsewhere stays its maker's).
    var returnsToLoop = false

    /// `curl_global_init`, run once at first use (Swift runs a global's initialiser exactly once, thread-safely).
    private static let globalInitResult: CURLcode = pa_curl_global_init_default()

    /// Loads libcurl and runs `curl_global_init` (once); errors name `url`.
    static func initializeLibrary(url: URL?) throws(TransportError) {
        do { try CurlLibrary.load() } catch {
            throw TransportError(.libraryUnavailable, url: url.map(RedactedURL.init), detail: error.description)
        }
        let global = Self.globalInitResult
        guard global == CURLE_OK else {
            throw TransportError(
                .curlSetup, url: url.map(RedactedURL.init), detail: "curl_global_init: " + Self.text(of: global),
                curlCode: Int(global.rawValue))
        }
    }

    /// Creates a handle whose errors name `url`, redacted.
    init(url: URL) throws(TransportError) {
        requestURL = url
        try Self.initializeLibrary(url: url)
        guard let handle = pa_curl_easy_init() else {
            throw TransportError(.curlSetup, url: RedactedURL(url), detail: "curl_easy_init returned no handle")
        }
        self.handle = handle
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        try check(pa_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
    }

    /// Makes a used handle as a new one that carries no request (`curl_easy_reset`: every option back to its
    /// default, the handle's buffers and caches kept), so that a process sending many requests does not allocate
    /// and free a handle for each; `assign(url:)` names its next request. The caller must be the handle's only user.
    func reset() throws(TransportError) {
        pa_curl_easy_reset(handle)
        pa_curl_slist_free_all(headerList)
        headerList = nil
        requestURL = nil
        errorBuffer[0] = 0
        try check(pa_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), "CURLOPT_ERRORBUFFER")
    }

    /// Names `url` in the errors of a reset handle's next request.
    func assign(url: URL) {
        requestURL = url
    }

    deinit {
        pa_curl_easy_cleanup(handle)
        pa_curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    /// The C handle, for the multi handle (adding, removing, matching finished transfers).
    var raw: UnsafeMutableRawPointer { handle }

    // MARK: - Options

    /// Sets a long-valued option.
    func set(_ option: CURLoption, _ value: Int, _ name: StaticString) throws(TransportError) {
        try check(pa_curl_setopt_long(handle, option, value), name)
    }

    /// Sets a string-valued option (libcurl copies the string).
    func set(_ option: CURLoption, _ value: String, _ name: StaticString) throws(TransportError) {
        try check(pa_curl_setopt_string(handle, option, value), name)
    }

    /// Sets a `curl_off_t`-valued option.
    func set(_ option: CURLoption, offset value: Int64, _ name: StaticString) throws(TransportError) {
        try check(pa_curl_setopt_off_t(handle, option, curl_off_t(value)), name)
    }

    /// Sets a pointer-valued option; the caller keeps the pointee alive for the handle's use.
    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?, _ name: StaticString) throws(TransportError)
    {
        try check(pa_curl_setopt_pointer(handle, option, value), name)
    }

    /// Sets a blob option; libcurl copies the bytes.
    func set(_ option: CURLoption, blob: Data, _ name: StaticString) throws(TransportError) {
        let code = blob.withUnsafeBytes { bytes in
            pa_curl_setopt_blob(handle, option, bytes.baseAddress, bytes.count)
        }
        try check(code, name)
    }

    /// Sets `CURLOPT_SSL_CTX_FUNCTION` with its `CURLOPT_SSL_CTX_DATA`; the caller keeps `data` alive for the
    /// handle's use.
    func setSSLContextFunction(_ callback: pa_curl_ssl_ctx_callback, data: UnsafeMutableRawPointer?)
        throws(TransportError)
    {
        try check(pa_curl_setopt_ssl_ctx_function(handle, callback, data), "CURLOPT_SSL_CTX_FUNCTION")
    }

    /// Sets the request body (`CURLOPT_POSTFIELDSIZE_LARGE`, then `CURLOPT_COPYPOSTFIELDS`, which copies it).
    func setBody(_ body: Data) throws(TransportError) {
        try set(CURLOPT_POSTFIELDSIZE_LARGE, offset: Int64(body.count), "CURLOPT_POSTFIELDSIZE_LARGE")
        let code: CURLcode = body.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress {
                return pa_curl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: base))
            }
            return pa_curl_setopt_string(handle, CURLOPT_COPYPOSTFIELDS, "")
        }
        try check(code, "CURLOPT_COPYPOSTFIELDS")
    }

    /// Sets a write or header callback.
    func set(_ option: CURLoption, callback: pa_curl_write_callback, _ name: StaticString) throws(TransportError) {
        try check(pa_curl_setopt_write_function(handle, option, callback), name)
    }

    /// Sets the request header lines (`Name: value`); the list lives as long as the handle.
    func setHeaderLines(_ lines: [String]) throws(TransportError) {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard let appended = pa_curl_slist_append(list, line) else {
                pa_curl_slist_free_all(list)
                throw TransportError(.curlSetup, url: url, detail: "curl_slist_append failed")
            }
            list = appended
        }
        try check(
            pa_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(list)), "CURLOPT_HTTPHEADER")
        pa_curl_slist_free_all(headerList)
        headerList = list
    }

    // MARK: - Transfer

    /// The code and message of a transfer run by a multi handle, which reported `code`.
    func outcome(of code: CURLcode) -> (code: CURLcode, message: String) {
        (code, code == CURLE_OK ? "" : message(for: code))
    }

    /// Runs the transfer; returns `CURLE_OK` or the failure code with libcurl's message.
    func perform() -> (code: CURLcode, message: String) {
        errorBuffer[0] = 0
        let code = pa_curl_easy_perform(handle)
        return (code, code == CURLE_OK ? "" : message(for: code))
    }

    /// The HTTP status of the last response.
    func responseCode() throws(TransportError) -> Int {
        var value = 0
        try check(pa_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &value), "CURLINFO_RESPONSE_CODE")
        return value
    }

    /// The PEM certificates of the last TLS connection, the server's own first (`CURLINFO_CERTINFO`; needs
    /// `CURLOPT_CERTINFO`).
    func certificateChainPEM() throws(TransportError) -> [String] {
        var info: UnsafeMutablePointer<curl_certinfo>?
        try check(pa_curl_getinfo_certinfo(handle, &info), "CURLINFO_CERTINFO")
        guard let info, info.pointee.num_of_certs > 0, let lists = info.pointee.certinfo else { return [] }
        var chain: [String] = []
        for index in 0..<Int(info.pointee.num_of_certs) {
            var item = lists[index]
            while let node = item {
                if let data = node.pointee.data {
                    let line = String(cString: data)
                    if line.hasPrefix("Cert:") {
                        chain.append(String(line.dropFirst(5)))
                        break
                    }
                }
                item = node.pointee.next
            }
        }
        return chain
    }

    // MARK: - Errors

    private func check(_ code: CURLcode, _ name: StaticString) throws(TransportError) {
        guard code != CURLE_OK else { return }
        throw TransportError(
            .curlSetup, url: url, detail: "\(name): \(message(for: code))", curlCode: Int(code.rawValue))
    }

    /// The error buffer's text when libcurl filled it, else the generic text for `code`.
    private func message(for code: CURLcode) -> String {
        let buffered = String(cString: errorBuffer).trimmingCharacters(in: .whitespacesAndNewlines)
        return buffered.isEmpty ? Self.text(of: code) : buffered
    }

    private static func text(of code: CURLcode) -> String {
        pa_curl_easy_strerror(code).map { String(cString: $0) } ?? "CURLcode \(code.rawValue)"
    }
}
