public import Foundation
import PortalAuthCore
import PortalAuthTransport

/// What a person needs to decide about a certificate: who it is for, who issued it, when it is valid, and
/// its SHA-256 fingerprint. It holds the certificate itself (public, not a secret) for trusting it.
public struct CertificateInfo: Sendable, Hashable, CustomStringConvertible {
    /// The DER encoding.
    public let der: Data
    /// The subject, e.g. `/CN=gis.example.com`.
    public let subject: String
    /// The issuer, in the same form.
    public let issuer: String
    /// The start of the validity period.
    public let notBefore: Date?
    /// The end of the validity period.
    public let notAfter: Date?
    /// Whether the certificate is issued by its own subject (self-signed).
    public let isSelfSigned: Bool
    /// The SHA-256 digest of the DER encoding as upper-case hex pairs joined by colons, as browsers show it.
    public let sha256Fingerprint: String

    /// Reads a DER certificate.
    ///
    /// - Throws: a network-credential error (a `CategorizedError`) when the bytes are not one X.509 certificate.
    public init(der: Data) throws {
        guard let certificate = X509Certificate(der: der) else {
            throw NetworkCredentialError(.certificateUnreadable, detail: "not a DER X.509 certificate")
        }
        try self.init(certificate)
    }

    /// Reads the first certificate of a PEM text (`-----BEGIN CERTIFICATE-----`).
    ///
    /// - Throws: a network-credential error (a `CategorizedError`) when there is no readable certificate.
    public init(pem: String) throws {
        let begin = "-----BEGIN CERTIFICATE-----", end = "-----END CERTIFICATE-----"
        guard let start = pem.range(of: begin), let stop = pem.range(of: end, range: start.upperBound..<pem.endIndex),
            let der = Data(base64Encoded: pem[start.upperBound..<stop.lowerBound].filter { !$0.isWhitespace })
        else {
            throw NetworkCredentialError(.certificateUnreadable, detail: "no PEM certificate block")
        }
        try self.init(der: der)
    }

    init(_ certificate: X509Certificate) throws {
        der = certificate.der
        subject = certificate.subject
        issuer = certificate.issuer
        notBefore = certificate.notBefore
        notAfter = certificate.notAfter
        isSelfSigned = certificate.isSelfIssued
        sha256Fingerprint = try SHA256Digest.hash(der).map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return byte < 16 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    /// The PEM encoding (what libcurl takes as a trusted certificate).
    public var pem: String {
        "-----BEGIN CERTIFICATE-----\n"
            + der.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END CERTIFICATE-----\n"
    }

    /// Whether the certificate names `host` (DNS name or IP address) — a TLS client checks this even for a
    /// certificate it was told to trust.
    public func matches(host: String) -> Bool {
        X509Certificate(der: der)?.matches(host: host) ?? false
    }

    /// Whether `date` is inside the validity period.
    public func isValid(at date: Date = Date()) -> Bool {
        (notBefore.map { $0 <= date } ?? true) && (notAfter.map { date <= $0 } ?? true)
    }

    public var description: String {
        let until = notAfter.map { ", valid until \($0.ISO8601Format())" } ?? ""
        return "\(subject) issued by \(isSelfSigned ? "itself" : issuer)\(until), SHA-256 \(sha256Fingerprint)"
    }
}

extension ServerCertificateProbe {
    /// The certificate presented by the server of `url` (an https URL), with the rest of its chain.
    ///
    /// - Returns: the server's certificate first.
    /// - Throws: a transport error (a `CategorizedError`: `unsupportedURL` for a URL that is not https, connection and handshake
    ///   failures), a network-credential error (certificateUnreadable; a `CategorizedError`) when the server sent no readable certificate.
    public func certificateChain(of url: URL) async throws -> [CertificateInfo] {
        let chain = try await certificateChainPEM(of: url).map { try CertificateInfo(pem: $0) }
        guard !chain.isEmpty else {
            throw NetworkCredentialError(
                .certificateUnreadable, detail: "the server at \(RedactedURL(url)) sent no certificate")
        }
        return chain
    }

    /// The server's certificate, first of `certificateChain(of:)`.
    public func certificate(of url: URL) async throws -> CertificateInfo {
        try await certificateChain(of: url)[0]
    }
}
