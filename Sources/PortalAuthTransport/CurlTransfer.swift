internal import CPortalAuthCurl
import Foundation
import PortalAuthCore
import Synchronization

/// One request/response exchange through libcurl: configured on the caller's thread, then run by the process's
/// event loop (`CurlMultiLoop`), whose thread calls the callbacks and `finish`.
///
/// It is the callbacks' userdata (through `Unmanaged`): it collects the response headers and body, enforces the
/// size limit, and stops the transfer when `cancellation` is set. Only `cancellation` is used by two threads at
/// once; the rest is handed from the caller's thread to the loop's with the transfer (through the loop's lock).
final class CurlTransfer: @unchecked Sendable {
    private let request: TransportRequest
    private let target: RequestTarget
    private let configuration: TransportConfiguration
    private let deadline: ContinuousClock.Instant
    /// Set by the caller's cancellation handler; read by the callbacks and the loop.
    let cancellation = CancellationFlag()
    /// The URL as errors name it (made only for an error).
    private var redacted: RedactedURL { RedactedURL(request.url) }
    /// The easy handle, configured by `init`.
    let easy: CurlEasyHandle
    /// The CA bundle path in use, for messages.
    private var caBundle: String?
    /// Where the process's CA stores are kept (`CAStoreCache.shared` but in tests).
    private let caStores: CAStoreCache
    /// The CA store the transfer's TLS connection is given, kept alive until the transfer ends (libcurl holds only
    /// an unretained pointer to it).
    private var caStore: CAStore?
    /// Resumed once, by `finish`, on the loop thread, with the HTTP status; the caller then reads the response
    /// (`response(status:)`), which the loop no longer touches.
    var continuation: UnsafeContinuation<Int, any Error>?

    private var body = Data()
    /// The header lines of the last response, as received (without CR LF), each followed by LF: made into
    /// `TransportHeaders` by the caller (`response(status:)`), so that the loop thread, which runs every transfer of
    /// the process, spends no time on Swift strings.
    private var rawHeaders: [UInt8] = []
    private var receivedBytes = 0
    private var exceededLimit = false
    /// Whether a status line arrived (the server started answering).
    private var receivedStatusLine = false

    /// Sets every option of `easy`, a new handle or a used one (the loop sets the share handle).
    init(
        request: TransportRequest, target: RequestTarget, configuration: TransportConfiguration,
        deadline: ContinuousClock.Instant, easy: CurlEasyHandle, caStores: CAStoreCache = .shared
    ) throws(TransportError) {
        self.request = request
        self.caStores = caStores
        self.target = target
        self.configuration = configuration
        self.deadline = deadline
        self.easy = easy
        caBundle = try configure(easy)
    }

    // MARK: - Finishing (loop thread)

    /// Ends the transfer after libcurl reported `code` for it.
    func finish(code: CURLcode) {
        finish(
            Result { () throws(TransportError) -> Int in
                let (code, message) = easy.outcome(of: code)
                if code != CURLE_OK {
                    throw failure(code: code, message: message)
                }
                return try easy.responseCode()
            }.mapError { $0 as any Error })
    }

    /// Resumes the caller with `result`, the HTTP status or the failure (once; the loop calls this once per transfer).
    func finish(_ result: Result<Int, any Error>) {
        let continuation = continuation
        self.continuation = nil
        if cancellation.isCancelled, case .failure = result {
            continuation?.resume(throwing: CancellationError())
        } else {
            continuation?.resume(with: result)
        }
    }

    /// An error for a failure of libcurl's set-up around this transfer.
    func setupError(_ detail: String) -> TransportError {
        TransportError(.curlSetup, url: redacted, detail: detail)
    }

    private func failure(code: CURLcode, message: String) -> TransportError {
        if exceededLimit || code == CURLE_FILESIZE_EXCEEDED {
            return TransportError(
                .responseTooLarge, url: redacted, detail: "", curlCode: Int(code.rawValue),
                context: String(configuration.maxResponseBytes))
        }
        // libcurl refuses a response header section over CURL_MAX_HTTP_HEADER (100 KiB) with CURLE_OUT_OF_MEMORY
        // (7.x; CURLE_TOO_LARGE from 8.6) and the text "Out of memory": the server's answer is at fault, not memory,
        // and that text would mislead, so it is left out unless it speaks of the header.
        if (code == CURLE_OUT_OF_MEMORY || code.rawValue == 100) && (message.contains("header") || receivedStatusLine) {
            return TransportError(
                .responseHeadersTooLarge, url: redacted, detail: message.contains("header") ? message : "",
                curlCode: Int(code.rawValue), context: String(Int(CURL_MAX_HTTP_HEADER)))
        }
        return TransportError.curl(code: Int(code.rawValue), message: message, url: redacted, caBundle: caBundle)
    }

    // MARK: - Options

    /// Sets every option; returns the CA bundle path in use, for messages.
    private func configure(_ handle: CurlEasyHandle) throws(TransportError) -> String? {
        try handle.set(CURLOPT_URL, request.url.absoluteString, "CURLOPT_URL")
        try handle.set(CURLOPT_PROTOCOLS_STR, "http,https", "CURLOPT_PROTOCOLS_STR")
        // redirects are followed by the client, hop by hop
        try handle.set(CURLOPT_FOLLOWLOCATION, 0, "CURLOPT_FOLLOWLOCATION")
        try handle.set(CURLOPT_NOSIGNAL, 1, "CURLOPT_NOSIGNAL")
        try handle.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1, "CURLOPT_SUPPRESS_CONNECT_HEADERS")
        try handle.set(CURLOPT_ACCEPT_ENCODING, "", "CURLOPT_ACCEPT_ENCODING")  // every decoding libcurl supports
        // HTTP/2 where the server offers it in the TLS handshake; a request waits for a connection that may carry
        // it alongside others rather than opening one more (multiplexing).
        try handle.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS, "CURLOPT_HTTP_VERSION")
        try handle.set(CURLOPT_PIPEWAIT, 1, "CURLOPT_PIPEWAIT")
        if target.isLoopback {
            try handle.set(CURLOPT_PROXY, "", "CURLOPT_PROXY")  // a proxy's loopback is not ours; others keep *_proxy
        }
        try configureTimeouts(handle)
        let caBundle = try configureTLS(handle)
        try configureAuthentication(handle)
        try configureMethodAndBody(handle)
        try handle.setHeaderLines(headerLines())
        try configureCallbacks(handle)
        return caBundle
    }

    private func configureTimeouts(_ handle: CurlEasyHandle) throws(TransportError) {
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero else {
            throw TransportError(.timedOut, url: redacted, detail: "the total time limit passed before this request")
        }
        let total = Self.milliseconds(remaining)
        let connect = min(Self.milliseconds(configuration.timeouts.connect), total)
        try handle.set(CURLOPT_TIMEOUT_MS, total, "CURLOPT_TIMEOUT_MS")
        try handle.set(CURLOPT_CONNECTTIMEOUT_MS, connect, "CURLOPT_CONNECTTIMEOUT_MS")
    }

    private func configureTLS(_ handle: CurlEasyHandle) throws(TransportError) -> String? {
        try handle.set(CURLOPT_SSL_VERIFYPEER, 1, "CURLOPT_SSL_VERIFYPEER")
        try handle.set(CURLOPT_SSL_VERIFYHOST, 2, "CURLOPT_SSL_VERIFYHOST")
        var caBundle: String?
        let file = configuration.tls.caBundle?.path ?? Self.environmentCABundle()
        if let trusted = request.credentials.trustedServerCertificates {
            try handle.set(CURLOPT_CAINFO_BLOB, blob: trusted, "CURLOPT_CAINFO_BLOB")
            caBundle = "(the trusted server certificate)"
        } else if request.url.scheme?.lowercased() == "https",
            let source = file.map(CASource.init(file:)) ?? CASource.libcurlDefault
        {
            // Only a TLS transfer reads a CA bundle: a plain-HTTP one must not fail on a machine without one (a
            // minimal system without ca-certificates asking a loopback server, as libcurl alone never did).
            try useSharedStore(of: source, handle)
            caBundle = file
        } else if let file {
            try handle.set(CURLOPT_CAINFO, file, "CURLOPT_CAINFO")
            caBundle = file
        }
        if let certificate = request.credentials.clientCertificate {
            try handle.set(CURLOPT_SSLCERT_BLOB, blob: certificate.pkcs12, "CURLOPT_SSLCERT_BLOB")
            try handle.set(CURLOPT_SSLCERTTYPE, "P12", "CURLOPT_SSLCERTTYPE")
            try handle.set(CURLOPT_KEYPASSWD, certificate.password, "CURLOPT_KEYPASSWD")
        }
        return caBundle
    }

    /// Gives the connection the process's one store of `source` (built on first use, by whichever transfer asks
    /// first), rather than letting libcurl parse the bundle into a new store for each connection.
    ///
    /// libcurl 7.87+ keeps one parsed bundle per multi handle (`CURLOPT_CA_CACHE_TIMEOUT`), but only for a CA file
    /// without a CA path, and Debian's libcurl has a default CA path: each connection parsed the whole system bundle
    /// (about 140 certificates), 64 times for 64 requests started at once over HTTP/1.1. Here libcurl has no CA file
    /// to read (`CURLOPT_CAINFO` unset), the source's path to keep connections of different sources apart
    /// (`CASource.libcurlPath`), no cache of its own (it would hand one source's store to another's connection), and
    /// the SSL_CTX callback that installs the shared store before libcurl looks at the store.
    private func useSharedStore(of source: CASource, _ handle: CurlEasyHandle) throws(TransportError) {
        let store: CAStore
        do { store = try caStores.store(for: source) } catch {
            throw TransportError(
                .caBundleUnusable, url: redacted, detail: error.detail,
                curlCode: Int(CURLE_SSL_CACERT_BADFILE.rawValue),
                context: source.file)
        }
        try handle.set(CURLOPT_CAINFO, pointer: nil, "CURLOPT_CAINFO")
        try handle.set(CURLOPT_CAPATH, source.libcurlPath, "CURLOPT_CAPATH")
        try handle.set(CURLOPT_CA_CACHE_TIMEOUT, 0, "CURLOPT_CA_CACHE_TIMEOUT")
        try handle.setSSLContextFunction(CAStore.installCallback, data: store.callbackData)
        caStore = store
    }

    private func configureAuthentication(_ handle: CurlEasyHandle) throws(TransportError) {
        guard let password = request.credentials.password else { return }
        var schemes = 0
        if password.schemes.contains(.basic) { schemes |= pa_curlauth_basic() }
        if password.schemes.contains(.digest) { schemes |= pa_curlauth_digest() }
        try handle.set(CURLOPT_USERNAME, password.username, "CURLOPT_USERNAME")
        try handle.set(CURLOPT_PASSWORD, password.password, "CURLOPT_PASSWORD")
        try handle.set(CURLOPT_HTTPAUTH, schemes, "CURLOPT_HTTPAUTH")
    }

    private func configureMethodAndBody(_ handle: CurlEasyHandle) throws(TransportError) {
        switch (request.method, request.body) {
        case (.get, nil):
            try handle.set(CURLOPT_HTTPGET, 1, "CURLOPT_HTTPGET")
        case (.head, nil):
            try handle.set(CURLOPT_NOBODY, 1, "CURLOPT_NOBODY")
        case (.post, let body):
            try handle.set(CURLOPT_POST, 1, "CURLOPT_POST")
            try handle.setBody(body ?? Data())
        case (let method, let body):
            try handle.set(CURLOPT_CUSTOMREQUEST, method.rawValue, "CURLOPT_CUSTOMREQUEST")
            if let body { try handle.setBody(body) }
        }
        try handle.set(
            CURLOPT_MAXFILESIZE_LARGE, offset: Int64(configuration.maxResponseBytes), "CURLOPT_MAXFILESIZE_LARGE")
    }

    /// `Name: value` lines; `Name;` sends an empty value; an empty `Expect:` stops libcurl's `100-continue`.
    private func headerLines() -> [String] {
        var lines = request.headers.map { $0.value.isEmpty ? "\($0.name);" : "\($0.name): \($0.value)" }
        if !request.headers.contains("User-Agent") { lines.append("User-Agent: \(configuration.userAgent)") }
        if !request.headers.contains("Expect") { lines.append("Expect:") }
        return lines
    }

    /// Installs the C callbacks; each finds this transfer again through its `Unmanaged` userdata.
    private func configureCallbacks(_ handle: CurlEasyHandle) throws(TransportError) {
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        try handle.set(
            CURLOPT_WRITEFUNCTION,
            callback: { data, size, count, userdata in
                CurlTransfer.from(userdata)?.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count)) ?? 0
            }, "CURLOPT_WRITEFUNCTION")
        try handle.set(CURLOPT_WRITEDATA, pointer: userdata, "CURLOPT_WRITEDATA")
        try handle.set(
            CURLOPT_HEADERFUNCTION,
            callback: { data, size, count, userdata in
                CurlTransfer.from(userdata)?.receiveHeader(UnsafeRawBufferPointer(start: data, count: size * count))
                    ?? 0
            }, "CURLOPT_HEADERFUNCTION")
        try handle.set(CURLOPT_HEADERDATA, pointer: userdata, "CURLOPT_HEADERDATA")
        // No progress callback: a cancelled transfer is removed from the loop at once (`CurlMultiLoop.run`).
    }

    /// The transfer behind a callback's userdata (kept alive by the loop for the whole transfer).
    private static func from(_ userdata: UnsafeMutableRawPointer?) -> CurlTransfer? {
        userdata.map { Unmanaged<CurlTransfer>.fromOpaque($0).takeUnretainedValue() }
    }

    // MARK: - The response (caller's thread, after `finish`)

    /// The response whose status `finish` reported: its header lines parsed now, off the loop thread.
    func response(status: Int) -> TransportResponse {
        var headers = TransportHeaders()
        for line in rawHeaders.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            if let first = line.first, Self.isBlank(first), var last = headers.fields.last {
                // An obsolete folded continuation of the previous field.
                last.value += " " + String(decoding: Self.trimmingBlanks(line), as: UTF8.self)
                headers = TransportHeaders(headers.fields.dropLast() + [last])
            } else if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
                let name = String(decoding: line[..<colon], as: UTF8.self)
                let value = String(decoding: Self.trimmingBlanks(line[(colon + 1)...]), as: UTF8.self)
                headers.add(name: name, value: value)
            }
        }
        return TransportResponse(statusCode: status, headers: headers, body: body, url: request.url)
    }

    // MARK: - Callbacks (loop thread)

    /// Appends body bytes; returns fewer than given (→ `CURLE_WRITE_ERROR`) past the limit or when cancelled.
    private func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard admit(bytes.count) else { return 0 }
        body.append(contentsOf: bytes)
        return bytes.count
    }

    /// Keeps one header line (parsed by `response(status:)`). A status line starts a new set (interim
    /// `100 Continue` responses).
    private func receiveHeader(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard admit(bytes.count) else { return 0 }
        var line = bytes[...]
        while let last = line.last, last == UInt8(ascii: "\r") || last == UInt8(ascii: "\n") { line = line.dropLast() }
        if line.starts(with: "HTTP/".utf8) {
            receivedStatusLine = true
            rawHeaders.removeAll(keepingCapacity: true)
        } else if !line.isEmpty {
            rawHeaders.append(contentsOf: line)
            rawHeaders.append(UInt8(ascii: "\n"))
        }
        return bytes.count
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    private static func trimmingBlanks(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var bytes = bytes
        while let first = bytes.first, isBlank(first) { bytes = bytes.dropFirst() }
        while let last = bytes.last, isBlank(last) { bytes = bytes.dropLast() }
        return bytes
    }

    /// The CA bundle named by the first non-empty variable of `TransportConfiguration.TLS.caBundleEnvironmentVariables`
    /// (as `effectiveCABundle()` finds it), read with `getenv` for each request rather than by copying the
    /// whole environment.
    private static func environmentCABundle() -> String? {
        for name in TransportConfiguration.TLS.caBundleEnvironmentVariables {
            if let path = ProcessEnvironment.value(of: name), !path.isEmpty { return path }
        }
        return nil
    }

    /// Counts `count` more received bytes against the limit.
    private func admit(_ count: Int) -> Bool {
        if cancellation.isCancelled { return false }
        receivedBytes += count
        if receivedBytes > configuration.maxResponseBytes {
            exceededLimit = true
            return false
        }
        return true
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    }
}

/// A flag set by a task's cancellation handler and read by the transfer's callbacks and the event loop's thread.
final class CancellationFlag: Sendable {
    private let state = Atomic<Bool>(false)

    /// Marks the transfer as cancelled.
    func cancel() {
        state.store(true, ordering: .releasing)
    }

    /// Whether `cancel()` was called.
    var isCancelled: Bool {
        state.load(ordering: .acquiring)
    }
}
