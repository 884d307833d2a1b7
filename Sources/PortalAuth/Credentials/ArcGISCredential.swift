public import Foundation

/// A credential for ArcGIS resources, as the `ArcGISCredentialStore` holds them: the base class of
/// `OAuthUserCredential`, `IAPCredential`, `TokenCredential`, `OAuthApplicationCredential` and
/// `PregeneratedTokenCredential`, as in the ArcGIS Maps SDK for Swift.
///
/// Being a class, it takes extensions with static members, as the SDK's samples write them:
///
/// ```swift
/// extension ArcGISCredential {
///     static var publicSample: ArcGISCredential {
///         get async throws { try await TokenCredential.credential(for: portalURL, username: "viewer01", password: password) }
///     }
/// }
/// store.add(try await .publicSample)
/// ```
///
/// Only this library makes subclasses (the initializer is internal); `kind` says which one a credential is.
public class ArcGISCredential: @unchecked Sendable {
    // Every subclass is final and keeps only constants and locked state, so sharing one across tasks is safe.

    init() {}

    /// Which kind of credential this is, with the credential as its concrete type: switch over it instead
    /// of casting.
    public var kind: Kind {
        preconditionFailure("every ArcGISCredential subclass of this library names its kind")
    }

    /// What the credential is for, in messages ("the portal https://…").
    public var targetDescription: String { "an ArcGIS credential" }

    /// The signed-in user, when known.
    public var username: String? { nil }

    /// Whether this credential can be used for a request to `url`.
    public func canBeUsed(for url: URL) -> Bool { false }

    /// The referer the token was generated for; requests that carry the token send it as `Referer`.
    /// Empty when the token is not bound to a referer (OAuth tokens).
    public var referer: String { "" }
}

/// A credential whose tokens come from an interactive sign-in and are kept fresh by a `TokenKeeper`.
protocol TokenKeepingCredential: ArcGISCredential {
    /// The keeper of the tokens.
    var keeper: TokenKeeper { get }
    /// The store key of this credential.
    var storeKey: String { get }
}

extension TokenKeepingCredential {
    /// The stored record, for persisting.
    var record: StoredCredential { keeper.current }
}

extension TokenKeepingCredential {
    /// The newest record of this credential: the store file's entry when the credential is persisted and the
    /// entry is at least as recent as the one in memory (another process may have rotated the refresh token
    /// since this one loaded it), else the one in memory. Used where an old token would be useless: revocation
    /// and logout. The store (and its keyring) is read on `BlockingWork`'s pool.
    func latestRecord() async -> StoredCredential {
        let inMemory = keeper.current
        guard let persistence = keeper.persistence,
            let entry = try? await BlockingWork.runIgnoringCancellation({
                try persistence.store.read().entry(for: persistence.key)
            }),
            let stored = StoredCredential(json: .object(entry)),
            stored.updatedAt >= inMemory.updatedAt
        else { return inMemory }
        return stored
    }
}

extension OAuthUserCredential {
    /// Why the tokens of this credential's last refresh were kept in the store file (0600) instead of the desktop
    /// keyring, which could not take them when they came (locked, gone, not answering); nil when they went to the
    /// keyring or the file was chosen anyway. They move into the keyring at the next use while it answers.
    package var keyringFallback: String? { keeper.keyringFallback }

    /// The provider's lifetime (seconds) of the access token when it is shorter than `minimumValidity` and this is the
    /// first time for this sign-in (see `TokenKeeper.firstShortLifetimeNotice`); nil otherwise.
    package func firstShortLifetimeNotice(minimumValidity: Duration) async -> Int? {
        await keeper.firstShortLifetimeNotice(for: .accessToken, minimumValidity: minimumValidity)
    }
}

extension IAPCredential {
    /// Why the tokens of this credential's last refresh were kept in the store file (0600) instead of the desktop
    /// keyring, which could not take them when they came (locked, gone, not answering); nil when they went to the
    /// keyring or the file was chosen anyway. They move into the keyring at the next use while it answers.
    package var keyringFallback: String? { keeper.keyringFallback }

    /// The provider's lifetime (seconds) of `token` when it is shorter than `minimumValidity` and this is the first time
    /// for this sign-in (see `TokenKeeper.firstShortLifetimeNotice`); nil otherwise.
    package func firstShortLifetimeNotice(for token: IAPTokenInfo.Token, minimumValidity: Duration) async -> Int? {
        await keeper.firstShortLifetimeNotice(for: token, minimumValidity: minimumValidity)
    }
}
