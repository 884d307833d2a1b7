import Foundation
import PortalAuthCore
import PortalAuthTransport

extension IssuerDiscovery {
    /// The issuer of a Microsoft Entra authority, from its v2.0 discovery document, fetched once before the browser
    /// opens (the sign-in keeps what it found: its keys, and the issuer its ID tokens and their refreshes must name).
    ///
    /// Modelled on MicrosoftDocs/entra-docs `docs/identity-platform/v2-protocols-oidc.md`: the document is at
    /// `/{tenant}/v2.0/.well-known/openid-configuration` for every tenant form. For a tenant named by its ID or a
    /// domain, the document names the tenant's issuer `https://{host}/{tenant ID}/v2.0` (tokens always name the tenant
    /// by its ID, `id-token-claims-reference.md`), and its endpoints with the tenant ID where a domain was asked for;
    /// that issuer is what `iss` must be. For `organizations` and `common` it names the template
    /// `https://{host}/{tenantid}/v2.0`, which each token's `tid` fills in (`Issuer.expectedIssuer(of:)`). `consumers`
    /// is refused here, before anything is opened.
    ///
    /// `explicit` (the configuration's issuer) pins a tenant: a tenant issuer of this cloud, which must be the
    /// document's for a tenant-specific authority, and for `organizations`/`common` then replaces the template (only
    /// that tenant's users are accepted). The authority's own template or document address is taken as the template.
    ///
    /// - Throws: `DiscoveryError` when the authority cannot serve an application proxy, its document cannot be read,
    ///   or it names another issuer or authorize endpoint than the authority's.
    static func entraIssuer(
        _ authority: EntraAuthority, explicit: URL?, authorizeURL: URL, httpClient: any TransportClient
    ) async throws(DiscoveryError) -> Issuer {
        if let reason = authority.unusableReason { throw .unusableAuthority(authorizeURL, reason: reason) }
        let url = authority.discoveryURL
        let object: JSONObject
        do {
            let response = try await httpClient.send(.get(url))
            let body = try? JSONValue.parse(response.body).objectValue
            guard response.statusCode == 200, let body else {
                // Entra's error JSON (`reference-error-codes.md`): AADSTS90002 for a tenant that does not exist.
                let said = body?["error_description"]?.stringValue
                throw DiscoveryError.entraDocumentMissing(
                    url, authorizeURL: authorizeURL,
                    problem: "HTTP \(response.statusCode)"
                        + (said.map { ": " + DisplayText.neutralised($0, limit: 300) } ?? "")
                        + (EntraErrorAdvice.advice(forDescription: said).map { ". " + $0 } ?? ""))
            }
            object = body
        } catch let error as DiscoveryError {
            throw error
        } catch {
            throw .entraDocumentMissing(url, authorizeURL: authorizeURL, problem: "\(error)")
        }
        let claimed = object["issuer"]?.stringValue
        let tenantID: String?
        if authority.tenant.isMultiTenant {
            guard claimed == authority.issuerTemplate else {
                throw .issuerMismatch(document: url, claimed: claimed, expected: authority.issuerTemplate)
            }
            tenantID = nil
        } else {
            // The tenant's issuer `https://{host}/{tenant ID}/v2.0`: of this cloud, a directory ID, and for an
            // authority named by its ID, that one.
            var expected = authority.issuer(tenantID: "{the tenant's ID}")
            if case .id(let configured) = authority.tenant { expected = authority.issuer(tenantID: configured) }
            let named = claimed.flatMap(authority.tenantID(inIssuer:))
            var matches = named != nil
            if case .id(let configured) = authority.tenant { matches = named == configured }
            guard matches, let named else {
                throw .issuerMismatch(document: url, claimed: claimed, expected: expected)
            }
            tenantID = named
        }
        // The document's authorize endpoint is the configured one, or (a domain) the same with the tenant's ID.
        let advertised = object["authorization_endpoint"]?.stringValue.flatMap(URL.init(string:))
        let accepted = [authorizeURL] + (tenantID.map { [authority.endpoint("authorize", tenantID: $0)] } ?? [])
        guard let advertised,
            accepted.contains(where: { URLNormalization.comparable($0) == URLNormalization.comparable(advertised) })
        else {
            throw .authorizeEndpointMismatch(
                document: url, advertised: object["authorization_endpoint"]?.stringValue, configured: authorizeURL)
        }
        let metadata = try ProviderMetadata(issuer: claimed ?? "", document: object, at: url)
        var issuer = Issuer(
            identifier: metadata.issuer, sendsIssuerInResponses: metadata.sendsIssuerInResponses, metadata: metadata,
            entra: authority)
        guard let explicit else { return issuer }
        var pinned = explicit.absoluteString
        while pinned.hasSuffix("/") { pinned.removeLast() }
        let ownForms = [authority.issuerTemplate, "https://\(authority.host)/\(authority.segment)/v2.0"].map {
            $0.lowercased()
        }
        if authority.tenant.isMultiTenant, ownForms.contains(pinned.lowercased()) { return issuer }
        guard let pinnedTenant = authority.tenantID(inIssuer: pinned),
            tenantID == nil || tenantID == pinnedTenant
        else {
            throw .pinnedIssuerRefused(
                explicit, authority: authority,
                documentIssuer: tenantID == nil ? nil : metadata.issuer)
        }
        issuer.identifier = authority.issuer(tenantID: pinnedTenant)
        issuer.isPinned = true
        return issuer
    }
}

extension EntraAuthority {
    /// `https://{host}/{tenantID}/oauth2/v2.0/{name}`.
    func endpoint(_ name: String, tenantID: String) -> URL {
        URL(string: "https://\(host)/\(tenantID)/oauth2/v2.0/\(name)")!
    }
}

extension DiscoveryError {
    /// An Entra authority that cannot serve an application proxy (`consumers`).
    static func unusableAuthority(_ authorizeURL: URL, reason: String) -> DiscoveryError {
        DiscoveryError(
            text: "the authorize_url \(RedactedURL(authorizeURL)) cannot be used\(MessagePart.given(": ", reason)); "
                + "nothing was opened or sent"
        )
    }

    /// The Entra authority's v2.0 discovery document could not be read.
    static func entraDocumentMissing(_ document: URL, authorizeURL: URL, problem: String) -> DiscoveryError {
        DiscoveryError(
            text: "the Microsoft Entra discovery document \(RedactedURL(document)) of the authorize_url "
                + "\(RedactedURL(authorizeURL)) could not be read\(MessagePart.given(" (", problem, ")")); Microsoft publishes one "
                + "for every tenant, "
                + "so check the tenant's ID or domain in the authorize_url, and the network. Without it the issuer and the "
                + "signing keys are unknown, so nothing was opened or sent")
    }

    /// The configuration's issuer does not name this Entra authority's tenant.
    static func pinnedIssuerRefused(_ explicit: URL, authority: EntraAuthority, documentIssuer: String?)
        -> DiscoveryError
    {
        let expected =
            MessagePart.nonBlank(documentIssuer).map { "the tenant's issuer \($0)" }
            ?? "a tenant issuer \(authority.issuer(tenantID: "{tenant ID}")) or the template \(authority.issuerTemplate)"
        return DiscoveryError(
            text: "the configured issuer \(DisplayText.neutralised(explicit.absoluteString, limit: 200)) is not "
                + "\(expected) that the Microsoft Entra authority https://\(authority.host)/\(authority.segment) issues "
                + "tokens under; nothing was opened or sent. Give that issuer, or none")
    }
}
