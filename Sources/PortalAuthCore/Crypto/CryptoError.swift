internal import CPortalAuthOpenSSL

/// A failure inside OpenSSL, with OpenSSL's own message.
package struct CryptoError: Error, Sendable, CustomStringConvertible, CategorizedError {
    private enum Code: Sendable {
        case randomUnavailable
        case digestFailed
        case invalidKey
        case invalidSignature
        case libraryUnavailable
    }

    private let code: Code
    private let detail: String

    private init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    static func randomUnavailable() -> CryptoError { CryptoError(.randomUnavailable, openSSLErrorText()) }
    static func digestFailed() -> CryptoError { CryptoError(.digestFailed, openSSLErrorText()) }
    static func invalidKey(_ why: String) -> CryptoError { CryptoError(.invalidKey, why) }
    static func invalidSignature() -> CryptoError {
        CryptoError(.invalidSignature, "the signature does not match the key")
    }
    package static func libraryUnavailable(_ error: SystemLibraryError) -> CryptoError {
        CryptoError(.libraryUnavailable, error.description)
    }

    public var category: ErrorCategory { code == .invalidSignature || code == .invalidKey ? .invalidContent : .local }

    public var description: String {
        switch code {
        case .randomUnavailable:
            return "the system's random number generator failed" + MessagePart.given(" (OpenSSL: ", detail, ")")
        case .digestFailed: return "SHA-256 failed" + MessagePart.given(" (OpenSSL: ", detail, ")")
        case .invalidKey: return "unusable signing key" + MessagePart.given(": ", detail)
        case .invalidSignature: return "signature check failed" + MessagePart.given(": ", detail)
        case .libraryUnavailable: return "OpenSSL is needed and missing" + MessagePart.given(": ", detail)
        }
    }
}

/// The oldest queued OpenSSL error as text, clearing the queue.
func openSSLErrorText() -> String {
    let code = pa_ERR_get_error()
    pa_ERR_clear_error()
    guard code != 0 else { return "no detail" }
    var buffer = [CChar](repeating: 0, count: 256)
    pa_ERR_error_string_n(code, &buffer, buffer.count)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
