package import Foundation

/// Which stored sign-in to use, as a command line or a caller says it.
package enum SignInQuery: Sendable, Equatable {
    /// The portal sign-in (with this client ID, when several apps are signed in to it).
    case portal(URL, clientID: String?)
    /// The IAP sign-in made with this configuration file, or with an identical copy of it elsewhere.
    case iap(file: URL)
    /// The first portal or IAP sign-in that covers this URL.
    case url(URL)
    /// The sign-in given this name (`portal-auth name`, `login --name`).
    case name(String)
    /// Nothing said: the only stored sign-in, else the default one.
    case automatic
}
