package import Foundation
import Glibc
package import Logging
import PortalAuthCore
import Synchronization

/// Receives the browser's redirect of one sign-in (or one logout confirmation) on a loopback port (RFC 8252 §7.3).
///
/// It binds when created, so the real port is known before the authorization URL is built:
/// ```swift
/// let listener = try LoopbackListener(redirectURL: URL(string: "http://127.0.0.1/callback")!)
/// let redirectURI = listener.redirectURL          // http://127.0.0.1:53817/callback
/// // … open the browser at the authorization URL built with `redirectURI` …
/// let callback = try await listener.waitForCallback(state: state, issuer: expectedIssuer)
/// ```
/// Requests to other paths get 404 and callbacks whose `state` matches nothing get 400 with an explanatory page;
/// both keep the wait going. The matching response ends it: a success page and the response's parameters, or a
/// failure page and the identity provider's error. After the end — or Task cancellation, or `close()` — every socket
/// is closed and the port is free.
package final class LoopbackListener: Sendable {
    // MARK: - Configuration

    /// Pages and limits of a listener; the defaults suit a browser sign-in.
    package struct Configuration: Sendable {
        /// The title of the page shown after the accepted response.
        package var successTitle: String
        /// The message of that page, e.g. "Signed in to https://www.arcgis.com. You can close this tab and return to
        /// the terminal." (The page cannot close itself, so it does not say it will.)
        package var successMessage: String
        /// The last paragraph of a failure page: where the person learns what to do next.
        package var failureNextStep: String = Configuration.terminalFailureNextStep
        /// The failure pages' last paragraph for a terminal program.
        package static let terminalFailureNextStep = "You can close this tab. The terminal shows what to do next."
        /// The largest request head (request line and headers) read; a larger one gets 431 and is closed.
        package var maximumHeadBytes: Int
        /// How long one connection may stay open, from accepting to closing.
        package var connectionTimeout: Duration
        /// The most connections served at once. Beyond that, room is made by closing a connection already answered,
        /// else the oldest one that has not sent a complete request line within a second; when there is none, the
        /// new connection is closed instead (after its request, if it sent one at once, was answered).
        package var maximumConnections: Int
        /// For `localhost` on an ephemeral port: how many ports to try for one that both 127.0.0.1 and ::1 can
        /// take before going on with 127.0.0.1 alone.
        package var dualStackAttempts: Int

        /// Creates a configuration.
        package init(
            successTitle: String = "Signed in",
            successMessage: String = "You are signed in. You can close this tab and return to the terminal.",
            maximumHeadBytes: Int = 16 * 1024,
            connectionTimeout: Duration = .seconds(10),
            maximumConnections: Int = 64,
            dualStackAttempts: Int = 5
        ) {
            self.successTitle = successTitle
            self.successMessage = successMessage
            self.maximumHeadBytes = max(maximumHeadBytes, 256)
            self.connectionTimeout = connectionTimeout
            self.maximumConnections = max(maximumConnections, 1)
            self.dualStackAttempts = max(dualStackAttempts, 1)
        }

        /// How long the kernel holds a connection that has sent nothing before handing it to the listener
        /// (`TCP_DEFER_ACCEPT`): the connection time limit, in whole seconds.
        var deferAcceptSeconds: Int32 {
            Int32(clamping: max(connectionTimeout.components.seconds, 1))
        }
    }

    // MARK: - State

    /// The redirect URL with the real port: the same scheme, host spelling (`localhost` stays `localhost`), path and
    /// query as given. Send this as `redirect_uri`.
    package let redirectURL: URL
    /// The addresses listened on, e.g. `["127.0.0.1:53817", "[::1]:53817"]`.
    package let listeningAddresses: [String]
    /// The port listened on.
    package let port: Int

    private let endpoint: LoopbackEndpoint
    private let configuration: Configuration
    private let logger: Logger
    private let control: LoopbackControl

    // MARK: - Life

    /// Binds the loopback address(es) of `redirectURL` at once.
    ///
    /// - `redirectURL`: `http` on `127.x.x.x`, `[::1]` or `localhost` (both 127.0.0.1 and ::1 where IPv6 exists);
    ///   with a port, that port (busy: an error naming it), with none or 0, a free one.
    /// - `logger`: debug events; never the code, the state or the query.
    package init(
        redirectURL: URL,
        configuration: Configuration = .init(),
        logger: Logger = Logger(label: "PortalAuth.loopback", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws(LoopbackError) {
        let endpoint = try LoopbackEndpoint(redirectURL: redirectURL)
        let (listeners, port) = try Self.bind(endpoint, configuration: configuration, logger: logger)
        let wake: (read: Int32, write: Int32)
        do {
            wake = try LoopbackSocket.makeWakePipe()
        } catch {
            for fd in listeners { Glibc.close(fd) }
            throw .bindFailed(address: endpoint.addresses[0].description, port: port, error)
        }
        self.endpoint = endpoint
        self.configuration = configuration
        self.logger = logger
        self.port = port
        self.redirectURL = endpoint.url(withPort: port)
        self.listeningAddresses = endpoint.addresses.prefix(listeners.count).map { "\($0):\(port)" }
        self.control = LoopbackControl(listeners: listeners, wakeReader: wake.read, wakeWriter: wake.write)
        logger.debug("loopback listener bound", metadata: ["addresses": "\(listeningAddresses)"])
    }

    deinit {
        close()
    }

    /// Stops listening and closes every socket; a wait in progress ends with a `.cancelled` error. Idempotent.
    ///
    /// While a wait is in progress the serving thread closes the sockets as it ends, an instant later; the waiting
    /// call returns only after that.
    package func close() {
        control.requestStop(.close)
    }

    // MARK: - Waiting

    /// Serves until the response whose `state` matches arrives, then closes everything and returns its parameters.
    ///
    /// - `state`: the `state` sent in the authorization (or logout) request.
    /// - `issuer`: the expected issuer; a response whose `iss` differs is refused (RFC 9207). A response without
    ///   `iss` is accepted.
    /// - `requiresCode`: a sign-in needs a `code`; pass false for a logout confirmation.
    /// - `timeout`: the wait's own limit, if any (`.timedOut`).
    ///
    /// Throws the identity provider's error (`.identityProviderError`, `.refused`), `.issuerMismatch`,
    /// `.cancelled` on Task cancellation or `close()`, `.timedOut`. Call once: the listener ends with the wait.
    package func waitForCallback(
        state: String, issuer: String? = nil, requiresCode: Bool = true, timeout: Duration? = nil
    ) async throws(LoopbackError) -> LoopbackCallback {
        let settings = LoopbackServeLoop.Settings(
            evaluator: evaluator(state: state, issuer: issuer, requiresCode: requiresCode),
            configuration: configuration,
            redirectURL: redirectURL.absoluteString,
            timeout: timeout,
            deadline: timeout.map { ContinuousClock.now + $0 }
        )
        let control = self.control
        let logger = self.logger
        let closedError = LoopbackError.closed(redirectURL: settings.redirectURL)
        let cancelledError = LoopbackError.cancelled(redirectURL: settings.redirectURL)
        let outcome: LoopbackControl.Outcome = await withTaskCancellationHandler {
            if let immediate = control.begin(closedError: closedError, cancelledError: cancelledError) {
                return immediate
            }
            do {
                return try await BlockingWork.run(name: "PortalAuth.loopback", dedicatedThread: true) {
                    let loop = LoopbackServeLoop(control: control, settings: settings, logger: logger)
                    let outcome = loop.run()
                    logger.debug("loopback listener finished", metadata: loop.statistics.logMetadata)
                    control.finish()
                    return outcome
                }
            } catch {
                control.finish()  // cancelled before the serving loop started
                return .failure(cancelledError)
            }
        } onCancel: {
            control.requestStop(.cancel)
        }
        return try outcome.get()
    }

    /// The callback in a redirect URL the user pasted back (a browser on another machine), checked by the same
    /// rules as a request to the listener. The caller closes the listener (or cancels the wait) afterwards.
    package func callback(
        fromPastedURL text: String, state: String, issuer: String? = nil, requiresCode: Bool = true
    ) throws(LoopbackError) -> LoopbackCallback {
        try evaluator(state: state, issuer: issuer, requiresCode: requiresCode).callback(fromPastedURL: text)
    }

    // MARK: - Internals

    private func evaluator(state: String, issuer: String?, requiresCode: Bool) -> CallbackEvaluator {
        CallbackEvaluator(path: endpoint.path, states: [state], issuer: issuer, requiresCode: requiresCode)
    }

    /// The listening descriptors (for tests of their flags).
    var listeningDescriptors: [Int32] { control.listeners }

    /// Binds every address of `endpoint` on one port; for `localhost` on an ephemeral port, retries until ::1 can
    /// take the port 127.0.0.1 got, and goes on with 127.0.0.1 alone when IPv6 is missing or no port fits.
    private static func bind(
        _ endpoint: LoopbackEndpoint, configuration: Configuration, logger: Logger
    ) throws(LoopbackError) -> (listeners: [Int32], port: Int) {
        let primary = endpoint.addresses[0]
        let attempts = endpoint.isLocalhost && endpoint.port == 0 ? configuration.dualStackAttempts : 1
        var attempt = 1
        while true {
            let first: (fd: Int32, port: Int)
            do {
                first = try LoopbackSocket.listen(
                    on: primary, port: endpoint.port, deferSeconds: configuration.deferAcceptSeconds)
            } catch {
                throw .bindFailed(address: primary.description, port: endpoint.port, error)
            }
            guard endpoint.addresses.count > 1 else { return ([first.fd], first.port) }
            let secondary = endpoint.addresses[1]
            do {
                let second = try LoopbackSocket.listen(
                    on: secondary, port: first.port, deferSeconds: configuration.deferAcceptSeconds)
                return ([first.fd, second.fd], first.port)
            } catch  where error.errno == EADDRINUSE {
                if endpoint.port != 0 {
                    Glibc.close(first.fd)
                    throw .bindFailed(address: secondary.description, port: first.port, error)
                }
                if attempt == attempts {
                    logger.debug("loopback listener: ::1 has no port in common with 127.0.0.1; IPv4 only")
                    return ([first.fd], first.port)
                }
                Glibc.close(first.fd)
                attempt += 1
            } catch {
                // No IPv6 on this machine (EADDRNOTAVAIL, EAFNOSUPPORT): 127.0.0.1 alone.
                logger.debug("loopback listener: ::1 unavailable; IPv4 only", metadata: ["error": "\(error)"])
                return ([first.fd], first.port)
            }
        }
    }
}
