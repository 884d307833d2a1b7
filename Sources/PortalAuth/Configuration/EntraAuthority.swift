import Foundation
import PortalAuthTransport

/// A Microsoft Entra ID (Microsoft identity platform v2.0) authority read from an authorize URL
/// `https://{host}/{tenant}/oauth2/v2.0/authorize`: the cloud's sign-in host and the tenant as written.
///
/// The tenant forms are those of MicrosoftDocs/entra-docs `docs/identity-platform/v2-protocols-oidc.md` (its tenant
/// table): the directory's GUID, one of its domains (`contoso.onmicrosoft.com`, a verified custom domain), or
/// `organizations`, `common`, `consumers`. The hosts are the global cloud's and the national clouds' of
/// `authentication-national-cloud.md` (US Government; China operated by 21Vianet, under its current and its former
/// host), which share the global cloud's layout.
struct EntraAuthority: Sendable, Equatable {
    /// How the tenant is named in the authority.
    enum Tenant: Sendable, Equatable {
        /// The directory (tenant) ID, lowercased.
        case id(String)
        /// One of the directory's domains, lowercased.
        case domain(String)
        /// Work or school accounts of any directory.
        case organizations
        /// Work or school accounts of any directory, and personal Microsoft accounts.
        case common
        /// Personal Microsoft accounts only.
        case consumers

        /// Whether the issuer is the template `https://{host}/{tenantid}/v2.0` (a multi-tenant authority).
        var isMultiTenant: Bool { self == .organizations || self == .common }
    }

    /// The sign-in hosts of the Microsoft identity platform's clouds.
    static let hosts: Set<String> = [
        "login.microsoftonline.com", "login.microsoftonline.us", "login.partner.microsoftonline.cn",
        "login.chinacloudapi.cn",
    ]

    /// The tenant ID of personal Microsoft accounts (`tid` of their tokens; `id-token-claims-reference.md`).
    static let consumerTenantID = "9188040d-6c67-4c5b-b112-36a304b66dad"

    /// The audiences of Microsoft Graph access tokens (its application ID and its resource URIs in the clouds),
    /// the only tokens Graph's UserInfo endpoint accepts (`userinfo.md`).
    static let graphAudiences: Set<String> = [
        "00000003-0000-0000-c000-000000000000", "https://graph.microsoft.com", "https://graph.microsoft.us",
        "https://dod-graph.microsoft.us", "https://microsoftgraph.chinacloudapi.cn",
    ]

    /// The issuer template of the `organizations` and `common` discovery documents (`v2-protocols-oidc.md`).
    static let tenantPlaceholder = "{tenantid}"

    /// The sign-in host, lowercased.
    let host: String
    /// The tenant path segment as written (case kept, for the URLs built from it).
    let segment: String
    /// The tenant's form.
    let tenant: Tenant

    /// The authority of an Entra v2.0 endpoint URL (`…/{tenant}/oauth2/v2.0/{authorize,token,logout,devicecode}`),
    /// or nil when `url` is not one (another host, plain http, the v1 endpoints).
    init?(endpoint url: URL) {
        guard url.scheme?.lowercased() == "https", let host = URLNormalization.host(of: url), Self.hosts.contains(host),
            URLNormalization.effectivePort(of: url) == 443
        else { return nil }
        let parts = url.path.split(separator: "/").map(String.init)
        guard parts.count == 4, parts[1].lowercased() == "oauth2", parts[2].lowercased() == "v2.0",
            let tenant = Self.tenant(parts[0])
        else { return nil }
        self.host = host
        self.segment = parts[0]
        self.tenant = tenant
    }

    /// Whether `url` is on one of the Microsoft identity platform's sign-in hosts (any path).
    static func isEntraHost(_ url: URL) -> Bool {
        URLNormalization.host(of: url).map { hosts.contains($0) } ?? false
    }

    /// The tenant form of a path segment, or nil when it is none (empty, or characters no tenant has).
    static func tenant(_ segment: String) -> Tenant? {
        let lowered = segment.lowercased()
        switch lowered {
        case "organizations": return .organizations
        case "common": return .common
        case "consumers": return .consumers
        default:
            if isTenantID(lowered) { return .id(lowered) }
            guard lowered.contains("."), !lowered.hasPrefix("."), !lowered.hasSuffix("."),
                lowered.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") })
            else { return nil }
            return .domain(lowered)
        }
    }

    /// Whether `text` is a directory ID: a GUID in its 8-4-4-4-12 hexadecimal form (any case).
    static func isTenantID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }

    /// `https://{host}/{tenant}/v2.0/.well-known/openid-configuration`: the v2.0 discovery document (not the v1.0
    /// one at `/{tenant}/.well-known/openid-configuration`, whose issuer is `https://sts.windows.net/{tid}/`).
    var discoveryURL: URL { URL(string: "https://\(host)/\(segment)/v2.0/.well-known/openid-configuration")! }

    /// `https://{host}/{tenant}/oauth2/v2.0/devicecode` (`v2-oauth2-device-code.md`).
    var deviceCodeURL: URL { URL(string: "https://\(host)/\(segment)/oauth2/v2.0/devicecode")! }

    /// The issuer of the v2.0 tokens of tenant `tenantID` in this cloud: `https://{host}/{tenantID}/v2.0`.
    func issuer(tenantID: String) -> String { "https://\(host)/\(tenantID)/v2.0" }

    /// The issuer template the `organizations` and `common` documents name.
    var issuerTemplate: String { issuer(tenantID: Self.tenantPlaceholder) }

    /// The directory ID in a tenant issuer of this cloud (`https://{host}/{GUID}/v2.0`), lowercased; nil for any other
    /// string (another host, a v1.0 issuer, a template).
    func tenantID(inIssuer issuer: String) -> String? {
        let prefix = "https://\(host)/"
        guard issuer.hasPrefix(prefix), issuer.hasSuffix("/v2.0") else { return nil }
        let tenant = String(issuer.dropFirst(prefix.count).dropLast("/v2.0".count))
        return Self.isTenantID(tenant) ? tenant.lowercased() : nil
    }

    /// Why this authority cannot sign in to a Microsoft Entra application proxy, or nil when it can.
    var unusableReason: String? { tenant == .consumers ? Self.personalAccountsReason(host: host) : nil }

    /// Why personal Microsoft accounts (`consumers`, or the consumer tenant through `common`) cannot be used.
    static func personalAccountsReason(host: String) -> String {
        "personal Microsoft accounts (the \(host)/consumers authority) cannot use a Microsoft Entra application proxy, "
            + "which admits only users of its own directory (work or school accounts); use the tenant's ID or domain "
            + "(https://\(host)/{tenant}/oauth2/v2.0/authorize), or organizations"
    }
}
