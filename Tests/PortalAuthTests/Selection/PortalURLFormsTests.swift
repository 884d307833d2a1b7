import Foundation
import Testing
@testable import PortalAuth

/// Portal addresses as people paste them (issue 35, item 6): normalised to the portal URL ArcGIS clients take, and
/// a sign-in stored under any of the forms (by an older version too) found by any other.
@Suite("Portal URL forms")
struct PortalURLFormsTests {
    /// What was typed, and the portal URL it names.
    static let forms: [(String, String)] = [
        ("https://gis.example.com/arcgis", "https://gis.example.com/arcgis"),
        ("https://gis.example.com/arcgis/", "https://gis.example.com/arcgis"),
        ("https://gis.example.com/arcgis/sharing/rest", "https://gis.example.com/arcgis"),
        ("https://gis.example.com/arcgis/sharing/rest/", "https://gis.example.com/arcgis"),
        ("https://gis.example.com/arcgis/sharing", "https://gis.example.com/arcgis"),
        ("https://gis.example.com/arcgis/home", "https://gis.example.com/arcgis"),
        ("https://gis.example.com/arcgis/home/", "https://gis.example.com/arcgis"),
        ("https://gis.example.com/arcgis/home/index.html", "https://gis.example.com/arcgis"),
        ("https://gis.example.com/arcgis/home/item.html?id=abc#top", "https://gis.example.com/arcgis"),
        ("https://GIS.Example.COM/arcgis", "https://gis.example.com/arcgis"),
        ("HTTPS://gis.example.com:443/arcgis/Sharing/Rest", "https://gis.example.com/arcgis"),
        ("https://gis.example.com:7443/arcgis/sharing/rest", "https://gis.example.com:7443/arcgis"),
        ("https://www.arcgis.com/", "https://www.arcgis.com"),
        ("https://www.arcgis.com/home/index.html", "https://www.arcgis.com"),
        ("https://www.arcgis.com/sharing/rest", "https://www.arcgis.com"),
        ("https://org.maps.arcgis.com/home/signin.html", "https://org.maps.arcgis.com"),
        // The case of the path is the server's: kept.
        ("https://gis.example.com/ArcGIS/sharing/rest", "https://gis.example.com/ArcGIS"),
        // Not a suffix the portal's own addresses end with: kept.
        ("https://gis.example.com/arcgis/rest/services", "https://gis.example.com/arcgis/rest/services"),
        ("https://gis.example.com/homes", "https://gis.example.com/homes"),
    ]

    @Test("typed forms become the portal URL", arguments: forms)
    func normalised(typed: String, portal: String) throws {
        let url = try #require(URL(string: typed))
        #expect(OAuthUserConfiguration.normalizedPortalURL(url).absoluteString == portal)
        // Normalising is idempotent: the portal URL is its own normal form.
        #expect(OAuthUserConfiguration.normalizedPortalURL(try #require(URL(string: portal))).absoluteString == portal)
    }

    @Test("the endpoints hang from the portal URL whatever form was given", arguments: forms.prefix(16))
    func endpoints(typed: String, portal: String) throws {
        let configuration = OAuthUserConfiguration(portalURL: try #require(URL(string: typed)), clientID: "c")
        #expect(configuration.tokenURL.absoluteString == portal + "/sharing/rest/oauth2/token")
    }

    @Test(
        "a sign-in stored under any form is found by any other, also under the key an older version wrote",
        arguments: forms.prefix(16))
    func lookup(typed: String, portal: String) throws {
        let store = ArcGISCredentialStore()
        var record = TokenKeeperTests.record(accessLeft: 3600)
        let typedURL = try #require(URL(string: typed))
        record.portalURL = typedURL  // as an older version kept it: the form typed
        store.add(OAuthUserCredential(record: record, persistence: nil, settings: SignInSettings(browser: nil)))
        let portalURL = try #require(URL(string: portal))
        #expect(store.oauthUserCredential(portalURL: portalURL) != nil, "\(typed) not found by \(portal)")
        #expect(store.oauthUserCredential(portalURL: portalURL.appending(path: "sharing/rest")) != nil)
        #expect(store.oauthUserCredential(portalURL: try #require(URL(string: portal + "/home/index.html"))) != nil)
        #expect(record.key == StoredCredential.oauthUserKey(portalURL: portalURL, clientID: record.clientID))
    }

    @Test("another portal on the same host is not found")
    func otherPortal() throws {
        let store = ArcGISCredentialStore()
        var record = TokenKeeperTests.record(accessLeft: 3600)
        let stored = try #require(URL(string: "https://gis.example.com/arcgis/sharing/rest"))
        record.portalURL = stored
        store.add(OAuthUserCredential(record: record, persistence: nil, settings: SignInSettings(browser: nil)))
        #expect(
            store.oauthUserCredential(portalURL: try #require(URL(string: "https://gis.example.com/portal"))) == nil)
        #expect(store.oauthUserCredential(portalURL: try #require(URL(string: "https://gis.example.com"))) == nil)
    }
}
