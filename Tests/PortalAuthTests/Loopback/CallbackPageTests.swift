import Testing
@testable import PortalAuth

@Suite("Loopback pages and responses")
struct CallbackPageTests {
    static let allPages: [CallbackPage] = [
        .success(title: "Signed in", message: "Signed in to https://www.arcgis.com."),
        .failure(.identityProviderError(code: "access_denied", description: "no", uri: "https://docs")),
        .failure(.issuerMismatch(expected: "https://a", received: "https://b")),
        .unknownState(.mismatch), .unknownState(.missing), .unknownState(.repeated), .malformedCallback("x"),
        .notFound, .methodNotAllowed, .headTooLarge, .badRequest("y"), .versionNotSupported, .wrongHost,
    ]

    @Test("pages are self-contained: no scripts, no external resources, no promise to close", arguments: allPages)
    func selfContained(page: CallbackPage) {
        let html = page.html.lowercased()
        #expect(html.hasPrefix("<!doctype html>"))
        #expect(html.contains("<meta charset=\"utf-8\">"))
        for forbidden in [
            "<script", "src=", "<link", "@import", "url(", "window.close", "will close", "closes automatically",
        ] {
            #expect(!html.contains(forbidden), "page \(page.title) contains \(forbidden)")
        }
    }

    @Test("echoed text is HTML-escaped")
    func escapes() {
        let page = CallbackPage.failure(
            .identityProviderError(
                code: "<b>x</b>", description: "<script>alert('1')</script> & \"more\"", uri: "javascript:alert(1)"))
        let html = page.html
        #expect(!html.contains("<script>"))
        #expect(!html.contains("<b>"))
        #expect(html.contains("&lt;script&gt;alert(&#39;1&#39;)&lt;/script&gt; &amp; &quot;more&quot;"))
        #expect(html.contains("&lt;b&gt;x&lt;/b&gt;"))
        #expect(!html.contains("href"))  // The error URI is shown as text, never as a link.
        #expect(CallbackPage.escape("a<>&\"'b") == "a&lt;&gt;&amp;&quot;&#39;b")
    }

    @Test("the success page carries the configured title and message, escaped")
    func successText() {
        let html = CallbackPage.success(title: "Signed in to <portal>", message: "Return to the terminal.").html
        #expect(html.contains("<title>Signed in to &lt;portal&gt;</title>"))
        #expect(html.contains("<p>Return to the terminal.</p>"))
    }

    @Test("responses carry the security headers, a length and Connection: close")
    func headers() throws {
        let response = CallbackPage.notFound.response()
        let text = String(decoding: response.bytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 404 Not Found\r\n"))
        for header in [
            "Content-Type: text/html; charset=utf-8", "Cache-Control: no-store", "Connection: close",
            "Referrer-Policy: no-referrer", "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'",
            "Content-Length: \(response.body.count)",
        ] {
            #expect(text.contains("\r\n\(header)"), "missing \(header)")
        }
        #expect(text.hasSuffix(CallbackPage.notFound.html))
        #expect(
            String(decoding: CallbackPage.methodNotAllowed.response().bytes, as: UTF8.self).contains("Allow: GET, HEAD")
        )
    }

    @Test("a response to HEAD has the length but no body")
    func headOnly() {
        let full = CallbackPage.notFound.response(), head = CallbackPage.notFound.response(headOnly: true)
        #expect(head.bytes.count == full.bytes.count - full.body.count)
        #expect(String(decoding: head.bytes, as: UTF8.self).contains("Content-Length: \(full.body.count)\r\n"))
    }
}

extension CallbackPage: CustomTestStringConvertible {
    public var testDescription: String { "\(status.rawValue) \(title)" }
}
