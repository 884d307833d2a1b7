import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthStore

@Suite("IAPConfiguration built in code")
struct IAPConfigurationTests {
    private static let authorize = URL(string: "https://login.example.com/oauth2/authorize")!
    private static let token = URL(string: "https://login.example.com/oauth2/token")!
    private static let logout = URL(string: "https://login.example.com/oauth2/logout")!
    private static let redirect = URL(string: "http://127.0.0.1/callback")!

    private func make(
        authorizeURL: URL = authorize, clientID: String = "client", redirectURL: URL = redirect,
        scopes: [String] = ["openid"], hosts: [String] = ["*.contoso.com"]
    ) throws(ConfigurationError) -> IAPConfiguration {
        try .configuration(
            authorizeURL: authorizeURL, tokenURL: Self.token, logoutURL: Self.logout, clientID: clientID,
            redirectURL: redirectURL, scopes: scopes, hostsBehindProxy: hosts)
    }

    @Test("keeps the values and has no source file")
    func values() throws {
        let configuration = try IAPConfiguration.configuration(
            authorizeURL: Self.authorize, tokenURL: Self.token, logoutURL: Self.logout, clientID: "client",
            redirectURL: Self.redirect, scopes: ["openid", "profile"], hostsBehindProxy: ["maps.contoso.com"],
            authorizationPromptType: .consent)
        #expect(configuration.tokenURL == Self.token)
        #expect(configuration.scopes == ["openid", "profile"])
        #expect(configuration.authorizationPromptType == .consent)
        #expect(configuration.sourceFile == nil)
        #expect(try make().authorizationPromptType == .unspecified)
    }

    @Test("applies the file rules and names problems by parameter, all at once")
    func problemsByParameter() {
        do {
            _ = try make(
                authorizeURL: URL(string: "http://login.example.com/a")!, clientID: " ",
                redirectURL: URL(string: "callback")!, scopes: ["openid", "a b"], hosts: ["ok.com", "*."])
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .invalidConfiguration)
            #expect(error.file == nil)
            #expect(
                error.issues.map(\.key) == [
                    "authorizeURL", "clientID", "redirectURL", "scopes[1]", "hostsBehindProxy[1]",
                ])
            #expect(error.issues.allSatisfy { $0.line == nil && $0.column == nil })
            #expect(
                error.issues[1].message
                    == "`clientID` must not be empty; use the application (client) ID from the app registration")
            #expect(
                error.description.hasPrefix("configuration is invalid (5 problems):\n  `authorizeURL` must use https"))
        }
    }

    @Test("empty lists are rejected")
    func emptyLists() {
        #expect(throws: ConfigurationError.self) { try make(scopes: []) }
        #expect(throws: ConfigurationError.self) { try make(hosts: []) }
    }

    static let canBeUsedTable: [(hosts: [String], url: String, expected: Bool)] = [
        (["*.contoso.com"], "https://maps.contoso.com/portal/sharing/rest", true),
        (["*.contoso.com"], "http://maps.contoso.com/portal", true),
        (["*.contoso.com"], "HTTPS://MAPS.CONTOSO.COM/", true),
        (["*.contoso.com"], "https://evilcontoso.com/", false),
        (["*.contoso.com"], "ftp://maps.contoso.com/", false),
        (["*.contoso.com"], "wss://maps.contoso.com/", false),
        (["*"], "file:///etc/hosts", false),
        (["*"], "https://anything.example/", true),
        (["gis.contoso.net:8443", "*.contoso.com"], "https://gis.contoso.net:8443/arcgis", true),
        (["gis.contoso.net:8443", "*.contoso.com"], "https://gis.contoso.net/arcgis", false),
    ]

    @Test("canBeUsed(for:) matches http(s) URLs against the patterns", arguments: canBeUsedTable)
    func canBeUsed(hosts: [String], url: String, expected: Bool) throws {
        let configuration = try make(hosts: hosts)
        #expect(configuration.canBeUsed(for: try #require(URL(string: url))) == expected)
    }

    // MARK: - Microsoft Entra helper

    @Test("the Microsoft helper fills the v2.0 endpoints and default scopes")
    func microsoft() throws {
        let configuration = try IAPConfiguration.microsoft(
            tenantID: "3f2504e0-4f89-41d3-9a0c-0305e82c3301", clientID: "6731de76-14a6-49ae-97bc-6eba6914391e",
            redirectURL: URL(string: "http://localhost/callback")!, hostsBehindProxy: ["*.contoso.com"],
            authorizationPromptType: .selectAccount)
        let base = "https://login.microsoftonline.com/3f2504e0-4f89-41d3-9a0c-0305e82c3301/oauth2/v2.0/"
        #expect(configuration.authorizeURL.absoluteString == base + "authorize")
        #expect(configuration.tokenURL.absoluteString == base + "token")
        #expect(configuration.logoutURL.absoluteString == base + "logout")
        #expect(
            configuration.scopes == [
                "6731de76-14a6-49ae-97bc-6eba6914391e/.default", "offline_access", "openid", "profile",
            ])
        #expect(configuration.authorizationPromptType == .selectAccount)
        #expect(configuration.isMicrosoftEntra)
        #expect(
            try IAPConfiguration.microsoft(
                tenantID: "contoso.onmicrosoft.com", clientID: "c", redirectURL: Self.redirect, hostsBehindProxy: ["*"]
            ).tokenURL.absoluteString == "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token")
    }

    @Test("the Microsoft helper reports a bad tenant with the other problems, not the derived scope")
    func microsoftProblems() {
        do {
            _ = try IAPConfiguration.microsoft(
                tenantID: "contoso/../x", clientID: "", redirectURL: Self.redirect, hostsBehindProxy: [])
            Issue.record("expected an error")
        } catch {
            #expect(error.issues.map(\.key) == ["tenantID", "clientID", "hostsBehindProxy"])
            #expect(
                error.issues[0].message
                    == #"`tenantID` must be the directory (tenant) ID, a GUID or a domain such as contoso.onmicrosoft.com, found "contoso/../x""#
            )
        }
        #expect(throws: ConfigurationError.self) {
            try IAPConfiguration.microsoft(
                tenantID: "", clientID: "c", redirectURL: Self.redirect, hostsBehindProxy: ["*"])
        }
    }
}
