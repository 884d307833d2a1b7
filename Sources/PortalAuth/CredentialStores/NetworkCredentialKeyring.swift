import Foundation
import PortalAuthStore

/// Where a persistent `NetworkCredentialStore` keeps its credentials: the desktop keyring only (Secret Service items
/// of the schema `org.portalauth.NetworkCredential`), never a file.
///
/// One item per credential: attributes `kind` (`password`, `certificate`, `trust`), `host`, `port`, and `username`
/// (passwords) or `file` (the PKCS#12 file of a certificate); the secret is the password, the PKCS#12 file's
/// password, or the trusted certificate in PEM. An item that cannot be read back (a certificate file gone, a foreign
/// item) is skipped when loading and left in the keyring.
///
/// The app's `CredentialStoreScope` decides which items it sees and removes, as `ArcGISCredentialStore` does with its
/// entries: an app's own store keeps its items under a schema of their own (`org.portalauth.AppNetworkCredential`) with
/// the attribute `store` (its store file's path), so that it sees only those and no other app's removals reach them;
/// in the shared ones an item records the app that added it (`added_by`), and an app's removals touch only the items
/// it added (those of other apps, and those written before apps were recorded, stay).
struct NetworkCredentialKeyring: Sendable {
    let storage: any SecretItemStorage
    /// The app's own store file these credentials belong to (attribute `store`); nil for the shared ones.
    var ownStore: String? = nil
    /// The app that adds to the shared ones, whose items alone it may remove (attribute `added_by`); nil: it may
    /// remove any (a keyring used without a scope).
    var owner: String? = nil

    /// The schema of this scope's items.
    private var schema: SecretSchemaName { ownStore == nil ? .network : .appNetwork }

    /// The attributes every item of this scope has.
    private var scopeAttributes: [String: String] { ownStore.map { ["store": $0] } ?? [:] }

    /// Whether this scope may remove an item of it.
    private func mayRemove(_ attributes: [String: String]) -> Bool {
        ownStore != nil || owner == nil || attributes["added_by"] == owner
    }

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
        for attributes in try storage.search(attributes: scopeAttributes, schema: schema) {
            guard let kind = attributes["kind"], let host = attributes["host"],
                let port = attributes["port"].flatMap(Int.init),
                let secret = try storage.lookup(attributes: Self.identifying(attributes), schema: schema)
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

    /// Removes the credentials of `kind` (all kinds when nil) for `space` (every space when nil) that this scope
    /// may remove.
    func remove(kind: NetworkCredential.Kind?, for space: ProtectionSpace?) throws(KeyringError) {
        var attributes = scopeAttributes
        if let kind { attributes["kind"] = Self.name(of: kind) }
        if let space {
            attributes["host"] = space.host
            attributes["port"] = String(space.port)
        }
        for item in try storage.search(attributes: attributes, schema: schema) where mayRemove(item) {
            try storage.clear(attributes: Self.identifying(item), schema: schema)
        }
    }

    // MARK: - Helpers

    private func replace(kind: String, space: ProtectionSpace, extra: [String: String], secret: String, label: String)
        throws(KeyringError)
    {
        let base = ["kind": kind, "host": space.host, "port": String(space.port)].merging(scopeAttributes) { $1 }
        var attributes = base.merging(extra) { $1 }
        if ownStore == nil, let owner { attributes["added_by"] = owner }
        let previous = try storage.search(attributes: base, schema: schema).map(Self.identifying).filter {
            $0 != attributes
        }
        // An earlier item whose attributes are all among the new one's (one stored before apps were recorded) would be
        // cleared with the new one, since a clear matches every item that has the attributes given: it goes first.
        let contained = previous.filter { $0.allSatisfy { attributes[$0.key] == $0.value } }
        for item in contained { try storage.clear(attributes: item, schema: schema) }
        try storage.store(secret, attributes: attributes, label: label, schema: schema)
        for item in previous where !contained.contains(item) {
            try storage.clear(attributes: item, schema: schema)
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
