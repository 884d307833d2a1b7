public import Foundation
import PortalAuthTransport

extension ServerCertificateProbe {
    /// The certificate presented by the server of `url` (an https URL), with the rest of its chain.
    ///
    /// - Returns: the server's certificate first.
    /// - Throws: `TransportError` (`unsupportedURL` for a URL that is not https, connection and handshake
    ///   failures), `NetworkCredentialError.certificateUnreadable` when the server sent no readable certificate.
    public func certificateChain(of url: URL) async throws -> [CertificateInfo] {
        let chain = try await certificateChainPEM(of: url).map { try CertificateInfo(pem: $0) }
        guard !chain.isEmpty else {
            throw NetworkCredentialError(.certificateUnreadable, detail: "the server at \(RedactedURL(url)) sent no certificate")
        }
        return chain
    }

    /// The server's certificate, first of `certificateChain(of:)`.
    public func certificate(of url: URL) async throws -> CertificateInfo {
        try await certificateChain(of: url)[0]
    }
}
