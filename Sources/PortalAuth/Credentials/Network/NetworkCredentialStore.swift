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
/// try await store.trust(try await ServerCertificateProbe().certificate(of: url), for: ProtectionSpace(url: url)!)
/// for credential in await store.credentials(forHost: "gis.example.com") {
///     if case .password(let password) = credential { print(password.username) }
/// }
/// var request = HTTPRequest.get(url)
/// request.credentials = await store.transportCredentials(for: url)
/// ```
public actor NetworkCredentialStore {
    /// The credentials of one protection space.
    private struct Entry {
        var password: PasswordCredential?
        var certificate: CertificateCredential?
        /// The server certificate trusted for the space.
        var trustedCertificate: CertificateInfo?

        var all: [NetworkCredential] {
            [password.map(NetworkCredential.password), certificate.map(NetworkCredential.certificate),
             trustedCertificate.map { _ in NetworkCredential.serverTrust }].compactMap { $0 }
        }
    }

    private var entries: [ProtectionSpace: Entry] = [:]

    /// An empty store.
    public init() {}

    /// The ArcGIS Maps SDK's persistent store, with its labels — on Linux, for now, a new store in memory.
    ///
    /// Network credentials (passwords, PKCS#12 bytes and their passwords) are not written to disk by this library:
    /// where they may go on Linux (the desktop keyring) is a later change. Until then the returned store keeps
    /// them for the life of the process, whatever `access` and `synchronizesWithiCloud` say (they have no Linux
    /// meaning; see `KeychainAccess`).
    public static func makePersistent(access: KeychainAccess, synchronizesWithiCloud: Bool = false) async throws -> NetworkCredentialStore {
        NetworkCredentialStore()
    }

    // MARK: - Changes

    /// Keeps `credential` for `space`, replacing one of the same kind.
    ///
    /// - Throws: `NetworkCredentialError.serverTrustUnusable` for `.serverTrust`: a trust needs the certificate the
    ///   server presented; use `trust(_:for:)` (the manager does, with the certificate of the challenge).
    public func add(_ credential: NetworkCredential, for space: ProtectionSpace) throws {
        var entry = entries[space] ?? Entry()
        switch credential {
        case .password(let password):
            entry.password = password
        case .certificate(let certificate):
            entry.certificate = certificate
        case .serverTrust:
            throw NetworkCredentialError(
                .serverTrustUnusable,
                detail: "no certificate of \(space) is given with the server trust; use trust(_:for:) with the certificate the server presented")
        }
        entries[space] = entry
    }

    /// Trusts `certificate`, the certificate the server of `space` presented, for that space only (a Linux
    /// addition: the SDK's `.serverTrust` answer, with the certificate it is for).
    ///
    /// Later requests to the protection space trust this one certificate as if it were a certificate authority
    /// (libcurl's `CURLOPT_CAINFO_BLOB`), with chain and host-name verification still on: a server there that
    /// presents another self-signed certificate is refused again, and no other host is affected.
    ///
    /// - Throws: `NetworkCredentialError.serverTrustUnusable` when the certificate does not name the space's host —
    ///   the host name is still verified, so trusting such a certificate could not work.
    public func trust(_ certificate: CertificateInfo, for space: ProtectionSpace) throws {
        guard certificate.matches(host: space.host) else {
            throw NetworkCredentialError(
                .serverTrustUnusable,
                detail: "the certificate of \(space) (\(certificate.subject)) is not for the host \(space.host); "
                    + "use the host name the certificate names, or give the server a certificate for \(space.host)")
        }
        var entry = entries[space] ?? Entry()
        entry.trustedCertificate = certificate
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
        case .serverTrust: entry.trustedCertificate = nil
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

    /// The credentials kept for `host` on any port, as the ArcGIS Maps SDK's `credentials(forHost:)` gives them
    /// (host names compared as `ProtectionSpace` does: without case or trailing dot).
    public func credentials(forHost host: String) -> [NetworkCredential] {
        let wanted = ProtectionSpace(host: host, port: 0).host
        return protectionSpaces.filter { $0.host == wanted }.flatMap { credentials(for: $0) }
    }

    /// The server certificate trusted for `space`, if any.
    public func trustedServerCertificate(for space: ProtectionSpace) -> CertificateInfo? {
        entries[space]?.trustedCertificate
    }

    /// What the transport should present and accept for a request to `url`: everything kept for its protection
    /// space combined, nothing for another space.
    public func transportCredentials(for url: URL) -> TransportCredentials {
        guard let space = ProtectionSpace(url: url), let entry = entries[space] else { return TransportCredentials() }
        var combined = TransportCredentials()
        combined.password = entry.password?.transport
        combined.clientCertificate = entry.certificate?.transport
        combined.trustedServerCertificates = entry.trustedCertificate.map { Data($0.pem.utf8) }
        return combined
    }
}
