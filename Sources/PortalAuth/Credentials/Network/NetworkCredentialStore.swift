public import Foundation

/// The network credentials an app holds, one of each kind per protection space (host and port).
///
/// In memory only: passwords, PKCS#12 bytes and their passwords are never written to disk (Linux has no
/// keychain the library could rely on), so they live as long as the process. A server trust holds no secret, but
/// it is kept in memory too, so that trusting a self-signed server is a decision made again in each session.
///
/// ```swift
/// let store = NetworkCredentialStore()
/// try await store.add(.password(username: "alice", password: secret), for: ProtectionSpace(url: url)!)
/// var request = HTTPRequest.get(url)
/// request.credentials = await store.transportCredentials(for: url)
/// ```
public actor NetworkCredentialStore {
    /// The credentials of one protection space.
    private struct Entry {
        var password: NetworkCredential?
        var certificate: NetworkCredential?
        var serverTrust: NetworkCredential?

        var all: [NetworkCredential] { [password, certificate, serverTrust].compactMap { $0 } }
    }

    private var entries: [ProtectionSpace: Entry] = [:]

    /// An empty store.
    public init() {}

    // MARK: - Changes

    /// Keeps `credential` for `space`, replacing one of the same kind.
    ///
    /// - Throws: `NetworkCredentialError.serverTrustUnusable` for a server trust that is not bound to the server's
    ///   certificate (`NetworkCredential.bound(to:)`) or whose certificate does not name the space's host — the
    ///   host name is still verified, so trusting such a certificate could not work.
    public func add(_ credential: NetworkCredential, for space: ProtectionSpace) throws {
        var entry = entries[space] ?? Entry()
        switch credential.kind {
        case .password:
            entry.password = credential
        case .certificate:
            entry.certificate = credential
        case .serverTrust:
            guard let certificate = credential.certificate else {
                throw NetworkCredentialError(.serverTrustUnusable, detail: "no certificate of \(space) is bound to the server trust")
            }
            guard certificate.matches(host: space.host) else {
                throw NetworkCredentialError(
                    .serverTrustUnusable,
                    detail: "the certificate of \(space) (\(certificate.subject)) is not for the host \(space.host); "
                        + "use the host name the certificate names, or give the server a certificate for \(space.host)")
            }
            entry.serverTrust = credential
        }
        entries[space] = entry
    }

    /// Removes every credential of `space`.
    public func remove(for space: ProtectionSpace) {
        entries[space] = nil
    }

    /// Removes the credential of `kind` for `space`.
    public func remove(_ kind: NetworkCredential.Kind, for space: ProtectionSpace) {
        guard var entry = entries[space] else { return }
        switch kind {
        case .password: entry.password = nil
        case .certificate: entry.certificate = nil
        case .serverTrust: entry.serverTrust = nil
        }
        entries[space] = entry.all.isEmpty ? nil : entry
    }

    /// Removes every credential.
    public func removeAll() {
        entries.removeAll()
    }

    // MARK: - Lookup

    /// The protection spaces that hold credentials.
    public var protectionSpaces: [ProtectionSpace] {
        entries.keys.sorted { ($0.host, $0.port) < ($1.host, $1.port) }
    }

    /// The credentials kept for `space`: password, certificate, server trust, those present.
    public func credentials(for space: ProtectionSpace) -> [NetworkCredential] {
        entries[space]?.all ?? []
    }

    /// What the transport should present and accept for a request to `url`: everything kept for its protection
    /// space combined, nothing for another space.
    public func transportCredentials(for url: URL) -> TransportCredentials {
        guard let space = ProtectionSpace(url: url), let entry = entries[space] else { return TransportCredentials() }
        var combined = TransportCredentials()
        for credential in entry.all {
            let part = credential.transportCredentials
            combined.password = part.password ?? combined.password
            combined.clientCertificate = part.clientCertificate ?? combined.clientCertificate
            combined.trustedServerCertificates = part.trustedServerCertificates ?? combined.trustedServerCertificates
        }
        return combined
    }
}
