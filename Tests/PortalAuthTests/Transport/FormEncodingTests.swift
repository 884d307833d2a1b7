import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthTransport

@Suite("Form encoding (application/x-www-form-urlencoded)")
struct FormEncodingTests {
    @Test(
        "escapes one value",
        arguments: [
            ("abcXYZ019", "abcXYZ019"),
            ("hello world", "hello+world"),
            ("*-._", "*-._"),
            ("~", "%7E"),
            ("a+b", "a%2Bb"),
            ("100%", "100%25"),
            ("!#$&'()+,/:;=?@[]", "%21%23%24%26%27%28%29%2B%2C%2F%3A%3B%3D%3F%40%5B%5D"),
            ("\"<>\\^`{|}", "%22%3C%3E%5C%5E%60%7B%7C%7D"),
            ("line\r\nbreak", "line%0D%0Abreak"),
            ("é€😀", "%C3%A9%E2%82%AC%F0%9F%98%80"),
            ("", ""),
        ])
    func escapes(input: String, expected: String) {
        #expect(FormEncoding.escape(input) == expected)
    }

    @Test("encodes fields in order, names escaped like values")
    func encodesFields() {
        let encoded = FormEncoding.encode([
            ("grant_type", "authorization_code"),
            ("redirect_uri", "http://127.0.0.1:8080/callback?x=1"),
            ("empty", ""),
            ("a b", "c&d=e"),
        ])
        #expect(
            encoded
                == "grant_type=authorization_code&redirect_uri=http%3A%2F%2F127.0.0.1%3A8080%2Fcallback%3Fx%3D1&empty=&a+b=c%26d%3De"
        )
        #expect(FormEncoding.encode([]) == "")
    }

    @Test("form requests carry the content type, Accept and the encoded body")
    func formRequest() {
        let request = TransportRequest.form(
            URL(string: "https://portal.example.com/sharing/rest/oauth2/token")!,
            fields: [("client_id", "abc"), ("code", "x y")])
        #expect(request.method == .post)
        #expect(request.headers["content-type"] == "application/x-www-form-urlencoded")
        #expect(request.headers["ACCEPT"] == "application/json")
        #expect(request.body == Data("client_id=abc&code=x+y".utf8))
        #expect(!request.description.contains("x+y"))
    }
}
