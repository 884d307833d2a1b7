internal import CPortalAuthCurl
internal import CPortalAuthOpenSSL  // the client-certificate request callback
public import Foundation
import PortalAuthCore

/// Reads the certificate a TLS server presents, and whether it asks for a client certificate, without trusting
/// it and without sending it anything: a TLS handshake with verification off (`CURLOPT_CONNECT_ONLY`,
/// `CURLOPT_CERTINFO`), no HTTP request.
///
/// This is how a server-trust challenge learns what the person is asked to trust; the certificate it returns
/// (`certificate(of:)`, read by the credential layer) is then the only one trusted for that host
/// (`NetworkCredentialStore.trust(_:for:)`), with verification on.
/// Proxies and time limits are those of requests.
public struct ServerCertificateProbe: Sendable {
    /// The settings used (time limits; the CA bundle is not consulted).
    package var configuration: TransportConfiguration

    /// Creates a probe with the default transport settings.
    public init() {
        self.init(configuration: TransportConfiguration())
    }

    /// Creates a probe with `configuration`'s proxies and time limits.
    package init(configuration: TransportConfiguration) {
        self.configuration = configuration
    }

    /// The certificates presented by the server of `url` (an https URL) as PEM texts, the server's own first;
    /// empty when the server sent none. `certificateChain(of:)` reads them.
    ///
    /// - Throws: `TransportError` (`unsupportedURL` for a URL that is not https, connection and handshake failures).
    package func certificateChainPEM(of url: URL) async throws -> [String] {
        let redacted = RedactedURL(url)
        return try await offThread(url) { handle throws(TransportError) in
            let (code, message) = handle.perform()
            guard code == CURLE_OK else {
                throw TransportError.curl(code: Int(code.rawValue), message: message, url: redacted, caBundle: nil)
            }
            return try handle.certificateChainPEM()
        }
    }

    /// Whether the server of `url` (an https URL) asks for a TLS client certificate in its handshake
    /// (a `CertificateRequest`, over TLS 1.2 or 1.3). No certificate is presented.
    ///
    /// This tells a client-certificate challenge from other failures: over TLS 1.3 the server refuses a missing
    /// certificate only after the client's handshake has finished, and the refusal often arrives as a reset.
    ///
    /// - Throws: a transport error (a `CategorizedError`) when the handshake fails before the server could ask.
    public func asksForClientCertificate(_ url: URL) async throws -> Bool {
        let redacted = RedactedURL(url)
        return try await offThread(url) { handle throws(TransportError) -> Bool in
            let asked = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
            asked.initialize(to: 0)
            defer { asked.deallocate() }
            do { try OpenSSLLibrary.loadSSL() } catch {
                throw TransportError(.libraryUnavailable, url: handle.url, detail: "\(error)")
            }
            try handle.setSSLContextFunction(
                pa_ssl_ctx_note_client_certificate_request, data: UnsafeMutableRawPointer(asked))
            let (code, message) = handle.perform()
            if asked.pointee != 0 { return true }  // asked, whatever the refusal of the missing certificate gave
            guard code == CURLE_OK else {
                throw TransportError.curl(code: Int(code.rawValue), message: message, url: redacted, caBundle: nil)
            }
            return false
        }
    }

    /// Runs `body` with a handle prepared for an unverified handshake with the server of `url`, on a thread of
    /// its own (`curl_easy_perform` blocks).
    private func offThread<T: Sendable>(
        _ url: URL, _ body: @escaping @Sendable (CurlEasyHandle) throws(TransportError) -> T
    ) async throws -> T {
        let redacted = RedactedURL(url)
        let target = try RequestTarget.checked(url)
        guard target.scheme == "https" else {
            throw TransportError(.unsupportedURL, url: redacted, detail: "only an https server has a certificate")
        }
        let configuration = configuration
        return try await BlockingWork.run(name: "portal-auth-certificate-probe") { () throws(TransportError) in
            let handle = try Self.handshakeHandle(url: url, target: target, configuration: configuration)
            return try body(handle)
        }
    }

    /// A handle that connects and shakes hands without verifying, sending no request.
    private static func handshakeHandle(url: URL, target: RequestTarget, configuration: TransportConfiguration)
        throws(TransportError) -> CurlEasyHandle
    {
        let handle = try CurlEasyHandle(url: url)
        try handle.set(CURLOPT_URL, url.absoluteString, "CURLOPT_URL")
        try handle.set(CURLOPT_PROTOCOLS_STR, "https", "CURLOPT_PROTOCOLS_STR")
        try handle.set(CURLOPT_NOSIGNAL, 1, "CURLOPT_NOSIGNAL")
        // no HTTP request: nothing is sent to an untrusted server
        try handle.set(CURLOPT_CONNECT_ONLY, 1, "CURLOPT_CONNECT_ONLY")
        try handle.set(CURLOPT_CERTINFO, 1, "CURLOPT_CERTINFO")
        try handle.set(CURLOPT_SSL_VERIFYPEER, 0, "CURLOPT_SSL_VERIFYPEER")  // only reading what the server presents
        try handle.set(CURLOPT_SSL_VERIFYHOST, 0, "CURLOPT_SSL_VERIFYHOST")
        if target.isLoopback { try handle.set(CURLOPT_PROXY, "", "CURLOPT_PROXY") }
        let connect = configuration.timeouts.connect.components
        let milliseconds = max(1, Int(connect.seconds) * 1000 + Int(connect.attoseconds / 1_000_000_000_000_000))
        try handle.set(CURLOPT_CONNECTTIMEOUT_MS, milliseconds, "CURLOPT_CONNECTTIMEOUT_MS")
        try handle.set(CURLOPT_TIMEOUT_MS, milliseconds, "CURLOPT_TIMEOUT_MS")
        return handle
    }
}
