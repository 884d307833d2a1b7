/// A request that got no HTTP response: refused before sending, or failed in libcurl.
///
/// The message carries libcurl's own text, the URL without its query (queries can hold secrets) and what to
/// do next. It never contains request header values or bodies. Match on `kind`; the set of kinds may grow.
package import PortalAuthCore

package struct TransportError: CategorizedError, CustomStringConvertible, Equatable {
    /// What went wrong, for matching: `error.kind == .tlsVerificationFailed`.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        fileprivate let code: Code

        /// Plain `http` to a host that is not loopback; nothing was sent.
        public static let insecureHTTP = Kind(code: .insecureHTTP)
        /// A URL that is not `http`/`https` or that libcurl cannot parse; nothing was sent.
        public static let unsupportedURL = Kind(code: .unsupportedURL)
        /// A header field with a line break or NUL in its name or value; nothing was sent.
        public static let invalidHeader = Kind(code: .invalidHeader)
        /// The host (or proxy) name could not be resolved.
        public static let cannotResolveHost = Kind(code: .cannotResolveHost)
        /// The connection was refused or could not be made.
        public static let cannotConnect = Kind(code: .cannotConnect)
        /// The connect or total time limit passed.
        public static let timedOut = Kind(code: .timedOut)
        /// The server's certificate or host name did not verify.
        public static let tlsVerificationFailed = Kind(code: .tlsVerificationFailed)
        /// The TLS handshake failed for another reason.
        public static let tlsHandshakeFailed = Kind(code: .tlsHandshakeFailed)
        /// The CA bundle could not be read or used.
        public static let caBundleUnusable = Kind(code: .caBundleUnusable)
        /// The client certificate could not be used (wrong file or password).
        public static let clientCertificateUnusable = Kind(code: .clientCertificateUnusable)
        /// The server requires a TLS client certificate and none (or none it accepts) was presented: the TLS 1.3
        /// alert `certificate_required`. (Over TLS 1.2 the same refusal is a bare `handshake_failure`, which
        /// stays `tlsHandshakeFailed`.)
        public static let clientCertificateRequired = Kind(code: .clientCertificateRequired)
        /// The connection broke: reset, closed early, nothing received.
        public static let connectionFailed = Kind(code: .connectionFailed)
        /// The server did not answer with HTTP.
        public static let invalidResponse = Kind(code: .invalidResponse)
        /// The response body was larger than `TransportConfiguration.maxResponseBytes`.
        public static let responseTooLarge = Kind(code: .responseTooLarge)
        /// The response's header section was larger than libcurl accepts (100 KiB): a misbehaving server or proxy.
        public static let responseHeadersTooLarge = Kind(code: .responseHeadersTooLarge)
        /// More redirects than `TransportConfiguration.maxRedirects`.
        public static let tooManyRedirects = Kind(code: .tooManyRedirects)
        /// A redirect from https to http, or one without a usable `Location`.
        public static let invalidRedirect = Kind(code: .invalidRedirect)
        /// libcurl could not be set up (an internal problem).
        public static let curlSetup = Kind(code: .curlSetup)
        /// libcurl (or OpenSSL) is not installed: it is opened on first use and could not be; nothing was sent.
        public static let libraryUnavailable = Kind(code: .libraryUnavailable)
        /// Any other transfer failure.
        public static let transferFailed = Kind(code: .transferFailed)

        public var description: String { "\(code)" }
    }

    fileprivate enum Code: Hashable, Sendable {
        case insecureHTTP, unsupportedURL, invalidHeader
        case cannotResolveHost, cannotConnect, timedOut
        case tlsVerificationFailed, tlsHandshakeFailed, caBundleUnusable, clientCertificateUnusable,
            clientCertificateRequired
        case connectionFailed, invalidResponse, responseTooLarge, responseHeadersTooLarge
        case tooManyRedirects, invalidRedirect
        case curlSetup, libraryUnavailable, transferFailed
    }

    /// What went wrong.
    public let kind: Kind
    /// The request's URL without user information, query or fragment.
    public let url: RedactedURL?
    /// libcurl's own text (error buffer or `curl_easy_strerror`), or this library's when curl was not involved.
    public let detail: String
    /// The `CURLcode`, when libcurl reported the failure.
    public let curlCode: Int?
    /// Extra context used in the message (the CA bundle path, the size limit, the redirect target).
    let context: String?

    /// Creates an error; `context` is woven into the message of some kinds.
    package init(_ kind: Kind, url: RedactedURL?, detail: String, curlCode: Int? = nil, context: String? = nil) {
        self.kind = kind
        self.url = url
        self.detail = detail
        self.curlCode = curlCode
        self.context = context
    }

    // MARK: - Category and message

    public var category: ErrorCategory {
        switch kind.code {
        case .insecureHTTP, .unsupportedURL, .invalidHeader: return .usage
        case .caBundleUnusable, .clientCertificateUnusable: return .unreadableInput
        case .timedOut: return .timedOut
        case .clientCertificateRequired: return .refused
        case .responseTooLarge, .responseHeadersTooLarge: return .invalidContent
        case .curlSetup, .libraryUnavailable: return .local
        case .cannotResolveHost, .cannotConnect, .tlsVerificationFailed, .tlsHandshakeFailed,
            .connectionFailed, .invalidResponse, .tooManyRedirects, .invalidRedirect, .transferFailed:
            return .unavailable
        }
    }

    public var description: String {
        let target = url.map(\.description) ?? "the server"
        let cause = MessagePart.given(": ", detail)
        switch kind.code {
        case .insecureHTTP:
            return "Refused to send a request to \(target) over plain http: only loopback hosts "
                + "(127.0.0.0/8, ::1, localhost and *.localhost) may use http. Use an https:// URL."
        case .unsupportedURL:
            return "Cannot send a request to \(target)\(cause). Use an https:// URL."
        case .invalidHeader:
            return "The request to \(target) was not sent\(cause)."
        case .cannotResolveHost:
            return "Could not resolve the host of \(target)\(cause). Check the URL, your DNS, "
                + "and the proxy variables (https_proxy, no_proxy)."
        case .cannotConnect:
            return "Could not connect to \(target)\(cause). Check that the server is up and reachable, "
                + "and the proxy variables (https_proxy, no_proxy)."
        case .timedOut:
            return "The request to \(target) timed out\(cause). The server or the network is slow or unreachable; "
                + "try again later."
        case .tlsVerificationFailed:
            return "Could not verify the TLS certificate of \(target)\(cause). If your network or a proxy intercepts "
                + "TLS, give its CA certificate (PEM): TransportConfiguration.TLS.caBundle, or PORTAL_AUTH_CA_BUNDLE=FILE."
        case .tlsHandshakeFailed:
            return "The TLS handshake with \(target) failed\(cause)."
        case .caBundleUnusable:
            let file = MessagePart.given(" ", context)
            return
                "Could not use the CA bundle\(file) for \(target)\(cause). Check that TransportConfiguration.TLS.caBundle or "
                + "PORTAL_AUTH_CA_BUNDLE (or CURL_CA_BUNDLE, SSL_CERT_FILE) names a readable PEM file."
        case .clientCertificateUnusable:
            return
                "The client certificate for \(target) could not be used\(cause). Check the .p12 file and its password."
        case .clientCertificateRequired:
            return
                "The server at \(target) requires a TLS client certificate\(cause). Give your certificate (.p12/.pfx file) "
                + "for it; if you gave one, the server does not accept it."
        case .connectionFailed:
            return "The connection to \(target) failed\(cause). Try again; if it keeps failing, the server is failing."
        case .invalidResponse:
            return "The server at \(target) did not answer with valid HTTP\(cause). Check the URL and its port."
        case .responseTooLarge:
            let limit = MessagePart.given(" of ", context, " bytes")
            return "The response from \(target) is larger than the limit\(limit); refused. "
                + "Check the URL: a token endpoint answers with a small JSON document."
        case .responseHeadersTooLarge:
            let limit = MessagePart.given(" of ", context, " bytes")
            return
                "The server at \(target) answered with response headers larger than libcurl's limit\(limit)\(cause); refused. "
                + "The server (or a proxy in between) is misbehaving: check the URL, or ask its administrator."
        case .tooManyRedirects:
            return "The request to \(target) was redirected too many times\(cause)."
        case .invalidRedirect:
            return "Refused the redirect from \(target)\(cause)."
        case .curlSetup:
            return
                "libcurl could not prepare the request to \(target)\(cause). This is an internal problem; please report it."
        case .libraryUnavailable:
            return "Cannot send the request to \(target)\(cause)."
        case .transferFailed:
            return "The request to \(target) failed\(cause)."
        }
    }

    // MARK: - From libcurl

    /// The error for a failed `CURLcode` (as an `Int`), with libcurl's message.
    ///
    /// Cancellation and the size limit are decided by the caller, which knows why a callback stopped.
    static func curl(code: Int, message: String, url: RedactedURL, caBundle: String?) -> TransportError {
        let kind: Kind
        var context: String?
        switch code {
        // TLS 1.3 alert 116, in the handshake (SSL_CONNECT_ERROR) or on the first read (RECV_ERROR).
        // (A `where` applies to one pattern only, hence one per code.)
        case 35 where message.contains("alert certificate required"),
            56 where message.contains("alert certificate required"):
            kind = .clientCertificateRequired
        case 3: kind = .unsupportedURL  // CURLE_URL_MALFORMAT
        // CURLE_UNSUPPORTED_PROTOCOL: the scheme was checked before, so this is a reply that is not HTTP/1+.
        case 1: kind = .invalidResponse
        case 5, 6: kind = .cannotResolveHost  // CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_RESOLVE_HOST
        case 7: kind = .cannotConnect  // CURLE_COULDNT_CONNECT
        case 28: kind = .timedOut  // CURLE_OPERATION_TIMEDOUT
        case 60: kind = .tlsVerificationFailed  // CURLE_PEER_FAILED_VERIFICATION
        // SSL_CONNECT_ERROR, cipher, engine, shutdown, issuer, pinned key, cert status
        case 35, 59, 66, 80, 83, 90, 91: kind = .tlsHandshakeFailed
        case 77:  // CURLE_SSL_CACERT_BADFILE
            kind = .caBundleUnusable
            context = caBundle
        case 58: kind = .clientCertificateUnusable  // CURLE_SSL_CERTPROBLEM
        // PARTIAL_FILE, GOT_NOTHING, SEND_ERROR, RECV_ERROR, HTTP2_STREAM
        case 18, 52, 55, 56, 92: kind = .connectionFailed
        // WEIRD_SERVER_REPLY, HTTP2, BAD_CONTENT_ENCODING, UNRECOVERABLE_POLL
        case 8, 16, 61, 100: kind = .invalidResponse
        case 63: kind = .responseTooLarge  // CURLE_FILESIZE_EXCEEDED
        // FAILED_INIT, NOT_BUILT_IN, OUT_OF_MEMORY, BAD_FUNCTION_ARGUMENT, UNKNOWN_OPTION
        case 2, 4, 27, 43, 48: kind = .curlSetup
        default: kind = .transferFailed
        }
        return TransportError(kind, url: url, detail: message, curlCode: code, context: context)
    }
}
