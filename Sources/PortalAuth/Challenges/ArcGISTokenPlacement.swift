/// Where `AuthenticationManager.data(for:)` puts an ArcGIS token.
package enum ArcGISTokenPlacement: Sendable, Hashable {
    /// `X-Esri-Authorization: Bearer …` (the default): never in a URL, so never in server logs, and not in
    /// the way of the `Authorization` field an Identity-Aware Proxy or web-tier authentication uses.
    case header
    /// `token=…` in the query of a GET, or in the form body of a `application/x-www-form-urlencoded` POST
    /// (other requests get the header): for servers older than ArcGIS Enterprise 10.x that read no header.
    case parameter
}
