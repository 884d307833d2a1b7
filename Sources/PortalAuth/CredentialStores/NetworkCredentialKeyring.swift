import Foundation
import PortalAuthStore

/// Where a persistent `NetworkCredentialStore` keeps its credentials: the desktop keyring only (Secret Service items
/// of the schema `org.portalauth.NetworkCredential`), never a file.
///
/// One item per credential: attributes `kind` (`password`, `certificate`, `trust`), `host`, `port`, and `username`
/// (passwords) or `file` (the PKCS#12 file of a certificate); the secret is the password, the PKCS#12 file's
/// password, or the trusted certificate in PEM. An item that cannot be read back (a certificate file gone, a foreign
/// item) is skipped when loading and left in the keyring.
struct NetworkCredentialKeyring: Sendable {
    let storage: any SecretItemStorage

    /// One credential read back.
    enum Loaded {
        case password(PasswordCredential)
        case certificate(CertificateCredential)
        case trust(CertificateInfo)
    }

    /// Every credential kept, by protection space; `skipped` counts items that could not be used.
    func load(now: Date = Date()) throws(KeyringError) -> (credentials: [(ProtectionSpace, Loaded)], skipped: Int) {
        var credentials: [(ProtectionSpace, Loaded)] = []
        var skipped = 0
        for attributes in try storage.search(attributes: [:], schema: .network) {
            guard let kind = attributes["kind"], let host = attributes["host"],
                let port = attributes["port"].flatMap(Int.init),
                let secret = try storage.lookup(attributes: Self.identifying(attributes), schema: .network)
            else {
                skipped += 1
                continue
            }
            let space = ProtectionSpace(host: host, port: port)
            switch kind {
            case "password" where attributes["username"] != nil:
                credentials.append(
                    (space, .password(PasswordCredential(username: attributes["username"]!, password: secret))))
            case "certificate" where attributes["file"] != nil:
                guard
                    let certificate = try? CertificateCredential(
                        file: URL(fileURLWithPath: attributes["file"]!), password: secret, now: now)
                else {
                    skipped += 1
                    continue
                }
                credentials.append((space, .certificate(certificate)))
            case "trust":
                guard let info = try? CertificateInfo(pem: secret) else {
                    skipped += 1
                    continue
                }
                credentials.append((space, .trust(info)))
            default:
                skipped += 1
            }
        }
        return (credentials, skipped)
    }

    /// Keeps a password for `space`, replacing the one kept before (written first, the old one removed after).
    func save(_ password: PasswordCredential, for space: ProtectionSpace) throws(KeyringError) {
        try replace(
            kind: "password", space: space, extra: ["username": password.username], secret: password.transport.password,
            label: "portal-auth password for \(password.username) at \(space)")
    }

    /// Keeps a client certificate's file and password for `space`.
    func save(_ certificate: CertificateCredential, for space: ProtectionSpace) throws(KeyringError) {
        try replace(
            kind: "certificate", space: space, extra: ["file": certificate.file.path],
            secret: certificate.transport.password,
            label: "portal-auth client certificate for \(space)")
    }

    /// Keeps the certificate trusted for `space`.
    func save(trust certificate: CertificateInfo, for space: ProtectionSpace) throws(KeyringError) {
        try replace(
            kind: "trust", space: space, extra: [:], secret: certificate.pem,
            label: "portal-auth trusted certificate of \(space)")
    }

    /// Removes the credentials of `kind` (all kinds when nil) for `space` (every space when nil).
    func remove(kind: NetworkCredential.Kind?, for space: ProtectionSpace?) throws(KeyringError) {
        var attributes: [String: String] = [:]
        if let kind { attributes["kind"] = Self.name(of: kind) }
        if let space {
            attributes["host"] = space.host
            attributes["port"] = String(space.port)
        }
        try storage.clear(attributes: attributes, schema: .network)
    }

    // MARK: - Helpers

    private func replace(kind: String, space: ProtectionSpace, extra: [String: String], secret: String, label: String)
        throws(KeyringError)
    {
        let base = ["kind": kind, "host": space.host, "port": String(space.port)]
        let attributes = base.merging(extra) { $1 }
        let previous = try storage.search(attributes: base, schema: .network)
        try storage.store(secret, attributes: attributes, label: label, schema: .network)
        for item in previous where Self.identifying(item) != attributes {
            try storage.clear(attributes: Self.identifying(item), schema: .network)
        }
    }

    /// An item's attributes without libsecret's own (`xdg:schema`).
    private static func identifying(_ attributes: [String: String]) -> [String: String] {
        attributes.filter { !$0.key.contains(":") }
    }

    static func name(of kind: NetworkCredential.Kind) -> String {
        switch kind {
        case .password: return "password"
        case .certificate: return "certificate"
        case .serverTrust: return "trust"
        }
    }
}
