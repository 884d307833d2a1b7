import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthStore

@Suite("hosts_behind_proxy patterns")
struct HostPatternTests {
    // MARK: - Matching

    static let matching: [(pattern: String, url: String, matches: Bool)] = [
        // "*" matches any host, any port.
        ("*", "https://anything.example/", true),
        ("*", "http://10.0.0.1:8080/x", true),
        ("*", "https://[2001:db8::1]/", true),
        // "*.domain" matches the domain and all subdomains at any depth, nothing else.
        ("*.contoso.com", "https://contoso.com/", true),
        ("*.contoso.com", "https://maps.contoso.com/portal", true),
        ("*.contoso.com", "https://a.b.c.contoso.com/", true),
        ("*.contoso.com", "https://evilcontoso.com/", false),
        ("*.contoso.com", "https://contoso.com.evil.net/", false),
        ("*.contoso.com", "https://maps.contoso.co/", false),
        ("*.contoso.com", "https://com/", false),
        // Case and a trailing dot are ignored on both sides.
        ("*.contoso.com", "https://MAPS.Contoso.COM/", true),
        ("*.contoso.com", "https://maps.contoso.com./", true),
        ("*.Contoso.com.", "https://maps.contoso.com/", true),
        ("Maps.Contoso.com", "https://maps.contoso.com", true),
        ("maps.contoso.com.", "https://MAPS.contoso.com./", true),
        // An exact host matches itself only.
        ("maps.contoso.com", "https://maps.contoso.com/portal", true),
        ("maps.contoso.com", "http://maps.contoso.com/portal", true),
        ("maps.contoso.com", "https://gis.maps.contoso.com/", false),
        ("maps.contoso.com", "https://contoso.com/", false),
        ("maps.contoso.com", "https://maps.contoso.com.evil.net/", false),
        // A port in the pattern must match the URL's effective port.
        ("maps.contoso.com:8443", "https://maps.contoso.com:8443/", true),
        ("maps.contoso.com:8443", "https://maps.contoso.com/", false),
        ("maps.contoso.com:443", "https://maps.contoso.com/", true),
        ("maps.contoso.com:443", "https://maps.contoso.com:443/", true),
        ("maps.contoso.com:80", "http://maps.contoso.com/", true),
        ("maps.contoso.com:80", "https://maps.contoso.com/", false),
        ("maps.contoso.com", "https://maps.contoso.com:8443/", true),
        ("*.contoso.com:8443", "https://a.contoso.com:8443/", true),
        ("*.contoso.com:8443", "https://a.contoso.com/", false),
        ("*:8443", "https://x.example:8443/", true),
        ("*:8443", "https://x.example/", false),
        // IP addresses, IPv6 in brackets, compared in canonical form.
        ("10.0.0.5", "http://10.0.0.5/", true),
        ("10.0.0.5", "http://10.0.0.50/", false),
        ("[::1]", "http://[::1]:8080/", true),
        ("[::1]:8443", "https://[::1]:8443/", true),
        ("[::1]:8443", "https://[::1]/", false),
        ("[0:0::1]", "http://[::1]/", true),
        ("[2001:DB8::10]", "https://[2001:db8:0::10]/", true),
        // Internationalised names compare in their ASCII form.
        ("bücher.de", "https://xn--bcher-kva.de/", true),
        ("*.bücher.de", "https://shop.bücher.de/", true),
    ]

    @Test("matches the table", arguments: matching)
    func matches(pattern: String, url: String, matches: Bool) throws {
        let parsed = try HostPattern(pattern)
        let target = try #require(URL(string: url))
        #expect(parsed.matches(target) == matches, "\(pattern) vs \(url)")
    }

    @Test("a URL without a host matches nothing, not even *")
    func noHost() throws {
        #expect(try HostPattern("*").matches(#require(URL(string: "file:///etc/passwd"))) == false)
    }

    // MARK: - Parsing

    static let parsed: [(pattern: String, hosts: HostPattern.Hosts, port: Int?)] = [
        ("*", .any, nil),
        ("*:8443", .any, 8443),
        ("*.Contoso.COM.", .domain("contoso.com"), nil),
        ("*.contoso.com:8443", .domain("contoso.com"), 8443),
        ("maps.contoso.com", .exact("maps.contoso.com"), nil),
        ("localhost:65535", .exact("localhost"), 65535),
        ("under_score.example", .exact("under_score.example"), nil),
        ("[::1]:1", .exact("::1"), 1),
        ("[0:0:0:0:0:0:0:1]", .exact("::1"), nil),
    ]

    @Test("parses hosts and ports", arguments: parsed)
    func parses(pattern: String, hosts: HostPattern.Hosts, port: Int?) throws {
        let value = try HostPattern(pattern)
        #expect(value.hosts == hosts)
        #expect(value.port == port)
        #expect(value.description == pattern)
    }

    static let invalid: [(pattern: String, reason: String)] = [
        ("", #"it is empty; write a host such as "maps.contoso.com" or "*.contoso.com""#),
        ("*.", #""*." names no domain; write "*.contoso.com" or "*""#),
        ("*..", #""*." names no domain; write "*.contoso.com" or "*""#),
        ("a*.b.com", #"a wildcard is allowed only alone ("*") or as the whole first label ("*.contoso.com")"#),
        ("**.b.com", #"a wildcard is allowed only alone ("*") or as the whole first label ("*.contoso.com")"#),
        ("*b.com", #"a wildcard is allowed only alone ("*") or as the whole first label ("*.contoso.com")"#),
        ("*.*.b.com", #"a wildcard is allowed only alone ("*") or as the whole first label ("*.contoso.com")"#),
        ("maps.*.com", #"a wildcard is allowed only alone ("*") or as the whole first label ("*.contoso.com")"#),
        ("https://maps.contoso.com/portal", #"it is a URL; write only the host ("maps.contoso.com")"#),
        ("maps.contoso.com/portal", "it contains a path; write only the host"),
        ("maps.contoso.com ", "it contains white space"),
        ("maps contoso.com", "it contains white space"),
        ("user@maps.contoso.com", ##"it contains "@", "?" or "#"; write only the host"##),
        ("maps.contoso.com:", #"the port "" is not a number from 1 to 65535"#),
        ("maps.contoso.com:0", #"the port "0" is not a number from 1 to 65535"#),
        ("maps.contoso.com:65536", #"the port "65536" is not a number from 1 to 65535"#),
        ("maps.contoso.com:443x", #"the port "443x" is not a number from 1 to 65535"#),
        ("maps.contoso.com:+443", #"the port "+443" is not a number from 1 to 65535"#),
        ("::1", #"an IPv6 address must be written in brackets, e.g. "[::1]" or "[::1]:8443""#),
        ("[::1", #"the IPv6 address has no closing "]""#),
        ("[::1]8443", #"only ":port" may follow an IPv6 address in brackets"#),
        ("[maps.contoso.com]", #""[maps.contoso.com]" is not an IPv6 address"#),
        ("maps..contoso.com", #""maps..contoso.com" has an empty label (two dots in a row or a leading dot)"#),
        (".contoso.com", #"".contoso.com" has an empty label (two dots in a row or a leading dot)"#),
        (".", "it names no host"),
        ("-maps.contoso.com", #"the label "-maps" starts or ends with "-""#),
        ("maps!.contoso.com", #""maps!" may hold only letters, digits, "-" and "_""#),
        (
            String(repeating: "a", count: 64) + ".com",
            "the label \"\(String(repeating: "a", count: 64))\" is longer than 63 characters"
        ),
        (
            Array(repeating: "abcdefghi", count: 26).joined(separator: "."),
            "the host name is longer than 253 characters"
        ),
    ]

    @Test("rejects invalid patterns with the reason", arguments: invalid)
    func rejects(pattern: String, reason: String) {
        #expect(throws: HostPattern.Invalid(reason: reason)) { try HostPattern(pattern) }
    }
}
