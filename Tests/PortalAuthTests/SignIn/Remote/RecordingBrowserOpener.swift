import Foundation
import Synchronization
@testable import PortalAuth

/// A `BrowserOpener` that records the URLs it was asked to open and then succeeds, exits with a status, or fails to start.
final class RecordingBrowserOpener: BrowserOpener {
    enum Behaviour: Sendable {
        case succeeds
        case exits(Int32)
        case cannotStart
    }

    private let opened = Mutex<[URL]>([])
    private let behaviour: Behaviour

    init(_ behaviour: Behaviour) {
        self.behaviour = behaviour
    }

    var urls: [URL] { opened.withLock { $0 } }

    func open(_ url: URL, onExit: @escaping @Sendable (Int32) -> Void) throws(BrowserError) {
        opened.withLock { $0.append(url) }
        switch behaviour {
        case .succeeds: onExit(0)
        case .exits(let status): onExit(status)
        case .cannotStart: throw BrowserError(command: "recorded-browser", reason: "No such file or directory")
        }
    }
}
