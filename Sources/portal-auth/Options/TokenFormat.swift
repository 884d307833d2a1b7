import ArgumentParser

/// How `portal-auth token` prints the token.
enum TokenFormat: String, CaseIterable, ExpressibleByArgument {
    /// The token alone and a newline.
    case plain
    /// An HTTP header line: `X-Esri-Authorization: Bearer …` for a portal, `Authorization: Bearer …` for IAP.
    case header
    /// One JSON object: the token, its type, expiry and owner.
    case json
}
