public import Foundation
import Glibc
import PortalAuthCore
import PortalAuthStore

/// The scheme handler's side of the channel: hands an address the desktop opened with (`my-maps-app://auth?…`) to
/// the sign-in waiting for it, and returns.
///
/// `portal-auth handle-redirect URL` calls this; an app that registers its own `.desktop` file for its scheme calls
/// it from its entry point when started with such an address:
/// ```swift
/// if CommandLine.arguments.count == 2, let url = URL(string: CommandLine.arguments[1]), CustomSchemeRedirect(url) != nil {
///     _ = try SchemeRedirectForwarder.forward(CommandLine.arguments[1])
///     exit(0)
/// }
/// ```
/// Every waiting sign-in of this user (one socket each in `$XDG_RUNTIME_DIR/portal-auth`) is offered the address;
/// the one whose state it carries takes it. Only sockets of this user are used (the folder's owner and mode, and the
/// kernel's `SO_PEERCRED` of each connection). The address is never logged or put in an error.
public enum SchemeRedirectForwarder {
    /// What became of a forwarded address.
    public enum Delivery: Sendable, Equatable {
        /// The waiting sign-in took the address and goes on with the token request.
        case accepted
        /// The waiting sign-in took the address, which is a refusal (such as `access_denied`); it ends with this message.
        case refusalDelivered(String)
    }

    /// Offers `address` to every waiting sign-in until one takes it.
    ///
    /// - Throws: ``SchemeRedirectError`` of kind `.noWaitingSignIn` (no sign-in waits), `.noMatchingSignIn` (none
    ///   sent the request this address answers; the reasons are listed), `.runtimeDirectory`, `.invalidScheme`
    ///   (not a custom-scheme address).
    public static func forward(
        _ address: String,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        timeout: Duration = .seconds(10)
    ) throws(SchemeRedirectError) -> Delivery {
        let trimmed = address.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let url = URL(string: trimmed), let redirect = CustomSchemeRedirect(url) else {
            throw SchemeRedirectError(
                .invalidScheme,
                "the address given to the scheme handler is not a custom-scheme address (such as my-maps-app://auth?…); nothing was forwarded."
            )
        }
        guard trimmed.utf8.count <= SchemeChannelReply.maximumAddressBytes else {
            throw SchemeRedirectError(
                .noMatchingSignIn,
                "the \(redirect.scheme): address is longer than \(SchemeChannelReply.maximumAddressBytes) bytes; nothing was forwarded."
            )
        }
        guard let directory = RedirectChannelDirectory.path(environment: environment) else {
            throw SchemeRedirectError(
                .runtimeDirectory,
                "XDG_RUNTIME_DIR is not set, so no waiting sign-in can be found; the \(redirect.scheme): address was not used."
            )
        }
        let sockets =
            (try? FileManager.default.contentsOfDirectory(atPath: directory))?
            .filter { $0.hasPrefix("signin-") && $0.hasSuffix(".sock") }.sorted() ?? []
        if !sockets.isEmpty { try RedirectChannelDirectory.check(directory, fixingMode: false) }
        var reasons: [String] = []
        for name in sockets {
            let path = (directory as NSString).appendingPathComponent(name)
            switch offer(trimmed, to: path, timeout: timeout) {
            case .accepted?: return .accepted
            case .refused(let message)?: return .refusalDelivered(message)
            case .notThisSignIn(let reason)?, .invalid(let reason)?:
                reasons.append(MessagePart.or(reason, "no reason given"))
            case nil: continue
            }
        }
        guard !reasons.isEmpty else {
            throw SchemeRedirectError(
                .noWaitingSignIn,
                "no sign-in is waiting for a \(redirect.scheme): address (it may have ended or timed out); start the sign-in again."
            )
        }
        let unique = Array(NSOrderedSet(array: reasons)) as? [String] ?? reasons
        throw SchemeRedirectError(
            .noMatchingSignIn,
            "the \(redirect.scheme): address matches no waiting sign-in (\(unique.joined(separator: "; "))); it was rejected. "
                + "Start the sign-in again and finish it in the browser it opens.")
    }

    /// Sends the address to one socket and reads its reply; nil when nobody listens there (a stale socket of an
    /// ended process, removed) or the peer is not this user.
    private static func offer(_ address: String, to path: String, timeout: Duration) -> SchemeChannelReply? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK, info.st_uid == getuid() else { return nil }
        guard var socketAddress = try? UnixSocketAddress(path: path) else { return nil }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var limit = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let connected = try? socketAddress.withPointer { (pointer, length) throws(SystemError) in
            try syscall("connect") { connect(fd, pointer, length) }
        }
        guard connected != nil else {
            if errno == ECONNREFUSED { unlink(path) }  // nobody listens: left by a process that ended
            return nil
        }
        guard let peer = try? PeerCredentials.of(fd), peer.uid == getuid() else { return nil }
        // A blocking socket: EAGAIN is SO_SNDTIMEO's time limit, which ends the attempt.
        guard sendAll(Array((address + "\n").utf8), on: fd, waitForRoom: { false }) == nil else {
            return .invalid("the waiting sign-in did not take the address")
        }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while reply.count < 8192, !reply.contains(10) {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            reply += buffer[0..<count]
        }
        let line = String(decoding: reply.prefix { $0 != 10 }, as: UTF8.self)
        return SchemeChannelReply(line: line) ?? .invalid("the waiting sign-in gave no answer")
    }
}
