import Foundation
import PortalAuthCore

/// A self-contained HTML page the loopback listener answers with: no scripts, no external resources, every echoed
/// text HTML-escaped. Pages never promise to close themselves (browsers do not let them).
package struct CallbackPage: Sendable, Equatable {
    /// The HTTP status the page goes with.
    let status: LoopbackResponse.Status
    /// The page title and heading.
    let title: String
    /// Paragraphs of plain text (escaped when rendered).
    let paragraphs: [String]
    /// Where a `302 Found` page sends the browser.
    var location: String? = nil

    // MARK: - The pages

    /// The matching response was accepted.
    package static func success(title: String, message: String) -> CallbackPage {
        CallbackPage(status: .ok, title: title, paragraphs: [message])
    }

    /// The matching response was a refusal; `error` says which (identity provider error, issuer mismatch, …).
    package static func failure(
        _ error: LoopbackError, nextStep: String = LoopbackListener.Configuration.terminalFailureNextStep
    ) -> CallbackPage {
        var paragraphs: [String]
        if let code = error.identityProviderErrorCode {
            paragraphs = ["The identity provider did not sign you in. It answered: \(code)."]
            if let description = error.identityProviderErrorDescription, !description.isEmpty {
                paragraphs.append(description)
            }
            if let uri = error.identityProviderErrorURI, !uri.isEmpty {
                paragraphs.append("More information: \(uri)")
            }
        } else {
            paragraphs = [error.description]
        }
        paragraphs.append(nextStep)
        return CallbackPage(status: .ok, title: "Sign-in failed", paragraphs: paragraphs)
    }

    /// A callback whose `state` matches no pending sign-in.
    package static func unknownState(_ reason: CallbackEvaluator.UnknownState) -> CallbackPage {
        let why =
            switch reason {
            case .missing: "This sign-in response has no state, so it cannot be matched to the sign-in in progress."
            case .repeated: "This sign-in response has more than one state, so it cannot be trusted."
            case .mismatch:
                "This sign-in response does not belong to the sign-in in progress. It may come from an earlier "
                    + "attempt, another tab, or another program."
            }
        return CallbackPage(
            status: .badRequest, title: "Unknown sign-in response",
            paragraphs: [
                why,
                "It was ignored. The terminal is still waiting: finish the sign-in in the tab it opened, "
                    + "or start the sign-in again from the terminal.",
            ])
    }

    /// A callback whose query cannot be read.
    package static func malformedCallback(_ reason: String) -> CallbackPage {
        CallbackPage(
            status: .badRequest, title: "Unreadable sign-in response",
            paragraphs: [
                "This sign-in response cannot be read: \(reason).", "It was ignored; the terminal is still waiting.",
            ])
    }

    /// Any path other than the redirect path (a favicon, a stray request).
    package static let notFound = CallbackPage(
        status: .notFound, title: "Not found",
        paragraphs: ["This address only receives the sign-in response of the terminal program."])

    /// A method other than GET and HEAD.
    package static let methodNotAllowed = CallbackPage(
        status: .methodNotAllowed, title: "Method not allowed",
        paragraphs: ["Only GET requests are answered here."])

    /// A request whose head is larger than the listener reads.
    package static let headTooLarge = CallbackPage(
        status: .headerFieldsTooLarge, title: "Request too large",
        paragraphs: ["The request headers are larger than this sign-in helper accepts."])

    /// A request that is not HTTP/1.x, or not a request at all.
    package static func badRequest(_ reason: String) -> CallbackPage {
        CallbackPage(status: .badRequest, title: "Bad request", paragraphs: ["The request cannot be read: \(reason)."])
    }

    /// An HTTP version other than 1.0 and 1.1.
    package static let versionNotSupported = CallbackPage(
        status: .httpVersionNotSupported, title: "HTTP version not supported",
        paragraphs: ["Only HTTP/1.0 and HTTP/1.1 are answered here."])

    /// A request naming a host that is not a loopback name (DNS rebinding, a misdirected request).
    package static let wrongHost = CallbackPage(
        status: .misdirectedRequest, title: "Wrong host",
        paragraphs: ["This sign-in helper only answers requests addressed to a loopback host."])

    // MARK: - Rendering

    /// The page as a complete HTML document.
    var html: String {
        let body = paragraphs.map { "<p>\(Self.escape($0))</p>" }.joined(separator: "\n")
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(Self.escape(title))</title>
            <style>
            body { font-family: system-ui, sans-serif; margin: 0; padding: 3rem 1.5rem; color: #1b1b1b; background: #f6f6f6; }
            main { max-width: 36rem; margin: 0 auto; padding: 2rem; background: #fff; border-radius: 8px;
                   box-shadow: 0 1px 3px rgba(0, 0, 0, 0.15); }
            h1 { font-size: 1.4rem; margin-top: 0; }
            p { line-height: 1.5; overflow-wrap: anywhere; }
            @media (prefers-color-scheme: dark) {
              body { color: #e8e8e8; background: #1e1e1e; } main { background: #2a2a2a; }
            }
            </style>
            </head>
            <body>
            <main>
            <h1>\(Self.escape(title))</h1>
            \(body)
            </main>
            </body>
            </html>

            """
    }

    /// The HTTP response carrying the page (`headOnly` for HEAD requests).
    package func response(headOnly: Bool = false) -> LoopbackResponse {
        LoopbackResponse(status: status, body: Array(html.utf8), headOnly: headOnly, location: location)
    }

    /// Escapes text for HTML element content and attribute values.
    static func escape(_ text: String) -> String { HTMLText.escaped(text) }
}
