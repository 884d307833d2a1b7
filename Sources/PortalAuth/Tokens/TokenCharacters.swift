/// What a token or a user name from a server may hold, checked where it enters (the token response, the
/// `generateToken` answer), so that nothing stored or printed can carry a line break into a header line or a
/// terminal escape into a message.
import PortalAuthCore

package enum TokenCharacters {
    /// Why `token` cannot be used as a token, or `nil` when it can: a token is visible ASCII (RFC 6749 Appendix A:
    /// `VSCHAR`, 0x20–0x7E, with no space at either end). A CR LF in a token would let `--format header` print two
    /// header lines.
    package static func problem(inToken token: String) -> String? {
        guard token.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            return "it holds a control character or a character outside visible ASCII"
        }
        guard token.first != " ", token.last != " " else { return "it starts or ends with a space" }
        return nil
    }

    /// Why `name` cannot be used as a user name, or `nil` when it can: no control characters, line breaks or
    /// invisible direction marks (see `DisplayText.containsControlCharacters(_:)`).
    package static func problem(inUserName name: String) -> String? {
        DisplayText.containsControlCharacters(name) ? "it holds a control character" : nil
    }
}
