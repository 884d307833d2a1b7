internal import CPortalAuthCurl
internal import CPortalAuthSystem
import Foundation
import Synchronization

/// The one libcurl event loop of the process: a `curl_multi` handle driven by one thread, which runs every
/// transfer `CurlHTTPClient` sends.
///
/// libcurl as its authors intend for many transfers: the thread sleeps in `curl_multi_poll` and is woken with
/// `curl_multi_wakeup` when a transfer is added or cancelled while it sleeps (a loop at work picks them up on its
/// next round, with no wake-up); finished transfers are read with `curl_multi_info_read` and their callers resumed.
/// Having finished its last transfer, the thread watches for a next one for a moment before it sleeps
/// (``nextRequestWait``), which is when an app sending requests one after another hands it over.
///
/// - Easy handles are used again: a finished transfer's handle is reset (`curl_easy_reset`: every option back to its
///   default, the buffers kept) and goes back to the loop (up to ``maximumSpareHandles``) for the next request,
///   rather than a handle allocated and freed per request. A spare handle keeps nothing of its last request.
/// - The multi handle holds the connection pool (`CURLMOPT_MAXCONNECTS`, ``maximumConnections``); HTTP/2 is
///   negotiated where the server offers it and concurrent requests to one origin are multiplexed on one connection
///   (`CURLOPT_PIPEWAIT`). The CA bundle is read once per process, not per connection: every connection that trusts
///   it shares one OpenSSL store (`CAStore`, kept by `CAStoreCache`), installed by the transfer's SSL_CTX callback.
/// - A share handle holds the connection cache, the TLS sessions (resumed handshakes) and the DNS cache for every
///   transfer of the loop. It has no lock callbacks, on purpose: only the loop thread ever touches it. A transfer's
///   easy handle is configured on the caller's thread without the share, and the loop attaches the share just
///   before adding the handle and detaches it just after removing it (attaching and detaching change the share's
///   own count), so an easy handle freed later on another thread no longer refers to it. The certificate probe,
///   which runs on the blocking pool with verification off, never uses the share.
/// - The thread starts with the first request (a process that sends none, such as `token` with a valid stored
///   token, starts none) and then lives as long as the process, idle in `curl_multi_poll` between requests.
final class CurlMultiLoop: @unchecked Sendable {
    // @unchecked: `multi` and `share` are used by the loop thread only, except `curl_multi_wakeup`, which libcurl
    // documents as callable from any thread; everything else shared goes through `inbox`, `handedOver` and
    // `spareHandles`.

    /// Connections kept open for reuse, across all hosts: enough for an app with 64 requests in flight over
    /// HTTP/1.1 plus a few other hosts (over HTTP/2 one connection per origin carries them all).
    static let maximumConnections = 100

    /// What other threads hand to the loop.
    private struct Inbox {
        var added: [CurlTransfer] = []
        var cancelled: [CurlTransfer] = []
        var threadStarted = false
        /// Whether the loop thread is (about to be) asleep in `curl_multi_poll` with nothing left in the inbox: only
        /// then does a new transfer or cancellation wake it. A loop at work picks them up when it next looks, and
        /// each wake-up costs a write, a read and a thread switch, which at 64 requests in flight is a large share of
        /// the loop's time.
        var sleeping = false

        /// Notes that something was handed over; whether the loop must be woken for it (once per sleep).
        mutating func wakeNeeded() -> Bool {
            defer { sleeping = false }
            return sleeping
        }
    }

    private let multi: UnsafeMutableRawPointer
    private let share: UnsafeMutableRawPointer
    private let inbox = Mutex(Inbox())
    /// Set when something is handed to the loop, cleared when the loop takes it: what the loop watches while it
    /// waits briefly for a next request before it sleeps (see `awaitNextRequest()`).
    private let handedOver = Atomic<Bool>(false)
    /// Easy handles of finished transfers, reset and used again by the next ones (see `handle(for:)`).
    private let spareHandles = Mutex<[CurlEasyHandle]>([])

    /// The most finished handles kept for reuse: as many as the requests an app has in flight at the library bench's
    /// highest concurrency, so that none is allocated in a steady stream of them. Each keeps its 16 KiB receive
    /// buffer; at 64 requests in flight the bench's process peaks 2 MiB above one that sends one at a time.
    static let maximumSpareHandles = 64

    /// The loop of the process, created on first use; `nil` with the reason when libcurl could not be loaded or
    /// set up.
    private static let instance: Result<CurlMultiLoop, TransportError> = Result(catching: { () throws(TransportError) in
        try CurlMultiLoop()
    })

    /// The process's loop; its errors name `url`.
    static func shared(for url: URL) throws(TransportError) -> CurlMultiLoop {
        switch instance {
        case .success(let loop): return loop
        case .failure(let error):
            throw TransportError(error.kind, url: RedactedURL(url), detail: error.detail, curlCode: error.curlCode)
        }
    }

    private init() throws(TransportError) {
        try CurlEasyHandle.initializeLibrary(url: nil)
        guard let multi = pa_curl_multi_init() else {
            throw TransportError(.curlSetup, url: nil, detail: "curl_multi_init returned no handle")
        }
        guard let share = pa_curl_share_init() else {
            throw TransportError(.curlSetup, url: nil, detail: "curl_share_init returned no handle")
        }
        for (data, name) in [
            (CURL_LOCK_DATA_CONNECT, "connections"), (CURL_LOCK_DATA_SSL_SESSION, "TLS sessions"),
            (CURL_LOCK_DATA_DNS, "DNS"),
        ] {
            let code = pa_curl_share_data(share, data)
            guard code == CURLSHE_OK else {
                throw TransportError(
                    .curlSetup, url: nil,
                    detail: "curl_share_setopt(\(name)): " + String(cString: pa_curl_share_strerror(code)))
            }
        }
        let code = pa_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, Self.maximumConnections)
        guard code == CURLM_OK else {
            throw TransportError(.curlSetup, url: nil, detail: "CURLMOPT_MAXCONNECTS: " + Self.text(of: code))
        }
        self.multi = multi
        self.share = share
    }

    // MARK: - Running transfers

    /// An easy handle for a request to `url`: a finished transfer's, reset, else a new one.
    func handle(for url: URL) throws(TransportError) -> CurlEasyHandle {
        if let spare = spareHandles.withLock({ $0.popLast() }) {
            spare.assign(url: url)
            return spare
        }
        let handle = try CurlEasyHandle(url: url)
        handle.returnsToLoop = true
        return handle
    }

    /// Keeps a finished transfer's handle for the next request (loop thread, after the transfer's last use of it),
    /// reset at once: a spare handle holds no URL, header, body or password of the request it carried.
    private func recycle(_ transfer: CurlTransfer) {
        guard transfer.easy.returnsToLoop, (try? transfer.easy.reset()) != nil else { return }
        spareHandles.withLock { spare in
            if spare.count < Self.maximumSpareHandles { spare.append(transfer.easy) }
        }
    }

    /// Runs `transfer` (configured) on the loop and returns its outcome: the response,
    /// `CancellationError` when the calling task is cancelled (the transfer is removed from the loop at once), or
    /// a `TransportError`.
    func run(_ transfer: CurlTransfer) async throws -> TransportResponse {
        let status = try await withTaskCancellationHandler {
            // Unsafe rather than checked: `finish` resumes it exactly once (the loop finishes each transfer once).
            try await withUnsafeThrowingContinuation { continuation in
                transfer.continuation = continuation
                let (startThread, wake) = inbox.withLock { inbox in
                    inbox.added.append(transfer)
                    defer { inbox.threadStarted = true }
                    return (!inbox.threadStarted, inbox.wakeNeeded())
                }
                handedOver.store(true, ordering: .releasing)
                if startThread {
                    let thread = Thread { [self] in loop() }
                    thread.name = "PortalAuth.curl"
                    thread.start()
                } else if wake {
                    _ = pa_curl_multi_wakeup(multi)
                }
            }
        } onCancel: {
            transfer.cancellation.cancel()
            let wake = inbox.withLock { inbox in
                inbox.cancelled.append(transfer)
                return inbox.wakeNeeded()
            }
            if wake { _ = pa_curl_multi_wakeup(multi) }
        }
        return transfer.response(status: status)
    }

    // MARK: - The loop thread

    private func loop() {
        // Foundation's `Thread.name` does not reach the kernel: named here, `ps -L` and /proc show it.
        _ = pa_set_thread_name("PortalAuth.curl")
        // The running transfers and their easy handles: a list, not a dictionary keyed by the handle, whose first use
        // had the runtime look up `UnsafeMutableRawPointer`'s `Hashable` conformance, a scan of every conformance in
        // the binary (about 0.2 ms of every `portal-auth refresh`, perf); at most a few dozen run at once (64 at the
        // library bench's highest concurrency).
        var active: [(easy: UnsafeMutableRawPointer, transfer: CurlTransfer)] = []
        while true {
            handedOver.store(false, ordering: .relaxed)
            let (added, cancelled) = inbox.withLock { inbox in
                defer { inbox.added.removeAll(); inbox.cancelled.removeAll() }
                return (inbox.added, inbox.cancelled)
            }
            for transfer in added {
                // Cancelled before it reached the loop: its cancellation may have been handled before it was added.
                if transfer.cancellation.isCancelled {
                    transfer.finish(.failure(CancellationError()))
                    continue
                }
                let shared = pa_curl_setopt_pointer(transfer.easy.raw, CURLOPT_SHARE, share)
                guard shared == CURLE_OK else {
                    transfer.finish(
                        .failure(
                            transfer.setupError("CURLOPT_SHARE: " + String(cString: pa_curl_easy_strerror(shared)))))
                    continue
                }
                let code = pa_curl_multi_add_handle(multi, transfer.easy.raw)
                guard code == CURLM_OK else {
                    detach(transfer)
                    transfer.finish(.failure(transfer.setupError("curl_multi_add_handle: " + Self.text(of: code))))
                    continue
                }
                active.append((transfer.easy.raw, transfer))
            }
            for transfer in cancelled {
                // Done or never added: its handle may already carry another transfer.
                guard let index = active.firstIndex(where: { $0.transfer === transfer }) else { continue }
                active.swapAt(index, active.count - 1)
                active.removeLast()
                _ = pa_curl_multi_remove_handle(multi, transfer.easy.raw)
                detach(transfer)
                transfer.finish(.failure(CancellationError()))
            }
            var running: Int32 = 0
            let performed = pa_curl_multi_perform(multi, &running)
            var easy: UnsafeMutableRawPointer?
            var result = CURLE_OK
            var finished = 0
            while pa_curl_multi_next_done(multi, &easy, &result) == 1 {
                guard let done = easy, let index = active.firstIndex(where: { $0.easy == done }) else { continue }
                active.swapAt(index, active.count - 1)
                let transfer = active.removeLast().transfer
                _ = pa_curl_multi_remove_handle(multi, done)
                detach(transfer)
                transfer.finish(code: result)
                recycle(transfer)
                finished += 1
            }
            if finished > 0 && active.isEmpty {
                awaitNextRequest()
            }
            var polled = CURLM_OK
            // Asleep only with nothing handed over meanwhile; else round again at once. A hand-over after this
            // sees `sleeping` and wakes the poll (a wake-up sent before the poll starts ends it at once).
            let sleep =
                performed == CURLM_OK
                && inbox.withLock { inbox in
                    inbox.sleeping = inbox.added.isEmpty && inbox.cancelled.isEmpty
                    return inbox.sleeping
                }
            if sleep {
                // libcurl shortens the wait to its own next timeout (a transfer's time limit, a retry). With
                // transfers running, the loop also looks again after `activePollLimitMilliseconds` whatever
                // happened: with a limit of a second, about one run in 30 of the library bench (5,000 requests over
                // one HTTP/2 connection) stalled for that second, woken by nothing; a short limit bounds any such
                // stall, whatever its cause in libcurl, and costs a few idle rounds a second while a server is slow.
                let limit = active.isEmpty ? 60_000 : Self.activePollLimitMilliseconds
                polled = pa_curl_multi_poll(multi, nil, 0, limit, nil)
                inbox.withLock { $0.sleeping = false }
            }
            if performed != CURLM_OK || polled != CURLM_OK {
                // The multi handle itself failed (out of memory, poll failed): every transfer in it fails, and the
                // loop goes on for the next ones.
                let reason =
                    performed != CURLM_OK
                    ? "curl_multi_perform: " + Self.text(of: performed) : "curl_multi_poll: " + Self.text(of: polled)
                for (raw, transfer) in active {
                    _ = pa_curl_multi_remove_handle(multi, raw)
                    detach(transfer)
                    transfer.finish(.failure(transfer.setupError(reason)))
                }
                active.removeAll()
                usleep(10_000)  // a failing poll returns at once: do not spin
            }
        }
    }

    /// The longest the loop sleeps while transfers are running (see the loop's poll).
    static let activePollLimitMilliseconds: Int32 = 10

    /// How long the loop, having just finished its last transfer, watches for the next one before it sleeps.
    static let nextRequestWait: Duration = .microseconds(200)

    /// Waits up to `nextRequestWait` for a next request, yielding the processor meanwhile, then returns.
    ///
    /// An app that sends requests one after another (each when the last has answered) hands the next one over a few
    /// tens of microseconds after it is resumed. Caught here, it costs no wake-up: no write to libcurl's wake-up
    /// socket by the caller, no sleep and wake of this thread, which together cost about as much as the app's own
    /// work on a request. It happens only on the way from busy to idle, and gives the processor away
    /// (`sched_yield`) at each look, so a loaded machine loses at most this short wait.
    private func awaitNextRequest() {
        let deadline = ContinuousClock.now + Self.nextRequestWait
        while !handedOver.load(ordering: .acquiring) && ContinuousClock.now < deadline {
            sched_yield()
        }
    }

    /// Detaches the share from a removed transfer's handle, on the loop thread (see the type's comment).
    private func detach(_ transfer: CurlTransfer) {
        _ = pa_curl_setopt_pointer(transfer.easy.raw, CURLOPT_SHARE, nil)
    }

    private static func text(of code: CURLMcode) -> String {
        pa_curl_multi_strerror(code).map { String(cString: $0) } ?? "CURLMcode \(code.rawValue)"
    }
}
