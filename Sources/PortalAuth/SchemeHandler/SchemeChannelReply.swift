/// The one line a waiting sign-in answers a forwarded address with (the channel's whole protocol: the handler
/// writes the address and a newline, the sign-in answers one of these and closes).
enum SchemeChannelReply: Sendable, Equatable {
    /// The address is this sign-in's response; the sign-in goes on with it.
    case accepted
    /// The address is this sign-in's response and a refusal (the identity provider's `error`, an issuer mismatch);
    /// the sign-in ends with it.
    case refused(String)
    /// The address belongs to no request of this sign-in (another state, scheme or path).
    case notThisSignIn(String)
    /// The connection was refused before reading (another user) or the address could not be read.
    case invalid(String)

    /// The longest address the channel reads; authorization responses are far shorter.
    static let maximumAddressBytes = 32 * 1024

    /// The reply as sent, without the newline.
    var line: String {
        switch self {
        case .accepted: "accepted"
        case .refused(let reason): "refused " + Self.oneLine(reason)
        case .notThisSignIn(let reason): "other " + Self.oneLine(reason)
        case .invalid(let reason): "invalid " + Self.oneLine(reason)
        }
    }

    /// Reads a reply line; nil for anything else.
    init?(line: String) {
        let (word, rest) =
            line.firstIndex(of: " ").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) }
            ?? (line, "")
        switch word {
        case "accepted": self = .accepted
        case "refused": self = .refused(rest)
        case "other": self = .notThisSignIn(rest)
        case "invalid": self = .invalid(rest)
        default: return nil
        }
    }

    /// The text without control characters, so a reply stays one printable line.
    private static func oneLine(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
    }
}
