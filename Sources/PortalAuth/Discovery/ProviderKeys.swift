import Foundation
import PortalAuthCore
import PortalAuthTransport
import Synchronization

/// The signing keys of OpenID providers (their `jwks_uri`), fetched when first needed and kept for as long as the
/// answer's HTTP cache headers allow (`Cache-Control: max-age`, `no-store`/`no-cache`, `Expires`; at most a day, and
/// five minutes when the answer says nothing).
///
/// An ID token whose `kid` is not among the kept keys makes one new fetch (the provider may have rotated its keys,
/// OIDC Core 10.1.1), never more for that token; a document fetched less than `refetchInterval` ago is not fetched
/// again for an unknown `kid`, so a flood of tokens naming unknown keys cannot make a loop of requests.
final class ProviderKeys: Sendable {
    /// The keys of this process.
    static let shared = ProviderKeys()

    private struct Entry {
        let keys: JSONWebKeySet
        let fetchedAt: Date
        let expiresAt: Date
    }

    private let entries = Mutex<[URL: Entry]>([:])
    /// The shortest time between two fetches of one document for an unknown `kid`.
    let refetchInterval: Duration

    init(refetchInterval: Duration = .seconds(1)) { self.refetchInterval = refetchInterval }

    /// The keys at `url`: the kept ones while they are fresh, else fetched; with `refetching`, fetched again
    /// unless they were fetched less than `refetchInterval` ago.
    ///
    /// - Throws: `IDTokenError` naming the URL when the keys cannot be fetched or read.
    func keys(at url: URL, refetching: Bool = false, httpClient: any TransportClient, now: Date)
        async throws(IDTokenError) -> JSONWebKeySet
    {
        let kept = entries.withLock { $0[url] }
        if let kept {
            let fresh = now < kept.expiresAt
            let recent = now.timeIntervalSince(kept.fetchedAt) < refetchInterval.timeInterval
            if (fresh && !refetching) || (refetching && recent) { return kept.keys }
        }
        let response: TransportResponse
        do {
            response = try await httpClient.send(.get(url))
        } catch {
            throw .keys("the provider's keys could not be fetched from \(RedactedURL(url)): \(error)")
        }
        guard response.statusCode == 200 else {
            throw .keys("the provider's keys at \(RedactedURL(url)) answered HTTP \(response.statusCode)")
        }
        let keys: JSONWebKeySet
        do {
            keys = try JSONWebKey.keySet(try JSONValue.parse(response.body))
        } catch {
            throw .keys("the provider's keys at \(RedactedURL(url)) are not a usable JWK Set: \(error)")
        }
        let lifetime = Self.lifetime(response.headers, now: now)
        entries.withLock { $0[url] = Entry(keys: keys, fetchedAt: now, expiresAt: now.addingTimeInterval(lifetime)) }
        return keys
    }

    /// Forgets every kept key set.
    func removeAll() { entries.withLock { $0.removeAll() } }

    /// How long an answer may be kept (RFC 9111 §4.2.1): `no-store`/`no-cache` 0, else `max-age`, else
    /// `Expires` − now, else 5 minutes; at most a day.
    static func lifetime(_ headers: TransportHeaders, now: Date) -> TimeInterval {
        let directives = headers.values(for: "Cache-Control").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if directives.contains(where: { $0 == "no-store" || $0 == "no-cache" }) { return 0 }
        if let maxAge = directives.first(where: { $0.hasPrefix("max-age=") }) {
            return min(
                TimeInterval(
                    Int(maxAge.dropFirst("max-age=".count).trimmingCharacters(in: .init(charactersIn: "\""))) ?? 0),
                86_400)
        }
        if let expires = headers["Expires"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
            guard let date = formatter.date(from: expires) else { return 0 }
            return min(max(date.timeIntervalSince(now), 0), 86_400)
        }
        return 300
    }
}
