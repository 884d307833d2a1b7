internal import CPortalAuthCurl
internal import CPortalAuthOpenSSL
import Foundation
import PortalAuthCore
import Synchronization

/// Where a transfer's trusted certificate authorities come from: a CA bundle file (PEM, read whole) and, for
/// libcurl's built-in default, the folder of certificates beside it (looked up by subject hash as needed).
struct CASource: Hashable, Sendable {
    /// The PEM file of certificates.
    var file: String?
    /// A folder of certificates named by subject hash (`c_rehash`), as libcurl's default CA path.
    var directory: String?

    /// The source of a CA bundle file given by the configuration or the environment.
    init(file: String) {
        self.file = file
        directory = nil
    }

    private init(file: String?, directory: String?) {
        self.file = file
        self.directory = directory
    }

    /// What libcurl was built to trust when nothing is configured (`curl_version_info`: its CA bundle and CA path,
    /// `/etc/ssl/certs/ca-certificates.crt` and `/etc/ssl/certs` on Debian); `nil` when it names neither, and
    /// libcurl then keeps its own way of finding them. Read once (libcurl is loaded by then).
    static let libcurlDefault: CASource? = {
        // CURLVERSION_NOW is a macro Swift does not import; the CA fields exist from the seventh age (7.70) on.
        guard let info = pa_curl_version_info(CURLVERSION_SEVENTH),
            info.pointee.age.rawValue >= CURLVERSION_SEVENTH.rawValue
        else {
            return nil
        }
        let file = info.pointee.cainfo.map { String(cString: $0) }
        let directory = info.pointee.capath.map { String(cString: $0) }
        return file == nil && directory == nil ? nil : CASource(file: file, directory: directory)
    }()

    /// What the transfers of this source give libcurl as `CURLOPT_CAPATH`, in place of the file it would read.
    ///
    /// libcurl tells connections (and TLS sessions) apart by their TLS settings, the CA file and path among them, and
    /// reuses one only for a transfer with the same settings. With the CA file left unset (the store comes from
    /// `CAStore`), the path is what keeps a connection verified against one source from serving a transfer that
    /// trusts another: the source's own folder, else its file. libcurl adds the path to the store as a folder to
    /// look certificates up in (once: OpenSSL keeps one entry per folder); a file there is no folder and finds none.
    var libcurlPath: String { directory ?? file ?? "" }
}

/// One OpenSSL certificate store (`X509_STORE`) built from a `CASource`, shared by every TLS connection that
/// trusts that source: each connection's `SSL_CTX` takes a reference to it (`SSL_CTX_set1_cert_store`) in the
/// transfer's `CURLOPT_SSL_CTX_FUNCTION`, so the bundle is read once per process rather than once per
/// connection. Freed when the last of the cache, the transfers and the connections lets it go.
///
/// A bundle of plain PEM certificates (the system's, about 140) is indexed rather than parsed (`CABundleIndex`):
/// a verification that asks the store for an issuer by name gets the certificates of that name, parsed then and
/// kept in the store. OpenSSL 3.0 parses a certificate in about 0.1 ms (its public key goes through the provider
/// decoders), so parsing the whole system bundle took about 17 ms of the first request's time, for the one or two
/// certificates a server's chain ends at; indexing it takes about 1.5 ms. A bundle holding anything else (trust
/// settings, CRLs, PEM headers) is loaded whole, as libcurl would.
final class CAStore: @unchecked Sendable {
    // @unchecked: `store` is set once; OpenSSL locks the store itself when connections look certificates up in it,
    // and `index` locks its own entries.
    private let store: OpaquePointer
    private let installations = Atomic<Int>(0)
    /// The index the store's look-ups parse certificates from, when the file was indexed rather than loaded whole.
    let index: CABundleIndex?

    /// Why a source could not be loaded.
    struct LoadError: Error {
        /// OpenSSL's reason, or what was missing.
        let detail: String
    }

    /// Reads `source`: its file indexed (or, when it holds more than plain certificates, parsed) now, its folder
    /// noted for look-ups. With the flags libcurl sets on the stores it fills itself: trusted certificates first,
    /// and an intermediate certificate in the file trusted as an anchor (a partial chain).
    static func load(_ source: CASource) throws(LoadError) -> CAStore {
        do {
            try OpenSSLLibrary.loadCrypto()
            try OpenSSLLibrary.loadSSL()
        } catch {
            throw LoadError(detail: error.description)
        }
        guard let store = pa_X509_STORE_new() else { throw LoadError(detail: "X509_STORE_new returned no store") }
        // An index that cannot be added to the store (OpenSSL out of memory) leaves the file to be loaded whole.
        let index = source.file.flatMap(CABundleIndex.read).flatMap { $0.attach(to: store) ? $0 : nil }
        let loaded = CAStore(store, index: index)
        pa_ERR_clear_error()
        if index == nil, let file = source.file, pa_X509_STORE_load_file(store, file) != 1 {
            throw LoadError(detail: Self.openSSLReason(or: "no PEM certificate could be read from it"))
        }
        if let directory = source.directory, pa_X509_STORE_load_path(store, directory) != 1 {
            throw LoadError(detail: Self.openSSLReason(or: "the certificate folder \(directory) could not be used"))
        }
        _ = pa_X509_STORE_set_flags(store, UInt(X509_V_FLAG_TRUSTED_FIRST) | UInt(X509_V_FLAG_PARTIAL_CHAIN))
        return loaded
    }

    private init(_ store: OpaquePointer, index: CABundleIndex?) {
        self.store = store
        self.index = index
    }

    deinit {
        pa_X509_STORE_free(store)
    }

    /// How many TLS connections were given this store.
    var connections: Int { installations.load(ordering: .relaxed) }

    /// The `CURLOPT_SSL_CTX_FUNCTION` that gives a connection's `SSL_CTX` the store its `CURLOPT_SSL_CTX_DATA` points
    /// to (an unretained `CAStore`, kept alive by its transfer); libcurl then leaves it as it is, having no CA file
    /// of its own to load into it.
    static let installCallback: pa_curl_ssl_ctx_callback = { _, context, data in
        guard let context, let data else { return 58 }  // CURLE_SSL_CERTPROBLEM: any non-zero code stops the transfer
        Unmanaged<CAStore>.fromOpaque(data).takeUnretainedValue().install(into: OpaquePointer(context))
        return 0
    }

    /// The value of `CURLOPT_SSL_CTX_DATA` for `installCallback`.
    var callbackData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private func install(into context: OpaquePointer) {
        pa_SSL_CTX_set1_cert_store(context, store)
        installations.add(1, ordering: .relaxed)
    }

    /// The reason OpenSSL queued for the last failure (the queue then emptied), else `fallback`.
    private static func openSSLReason(or fallback: String) -> String {
        let code = pa_ERR_get_error()
        defer { pa_ERR_clear_error() }
        guard code != 0 else { return fallback }
        var buffer = [CChar](repeating: 0, count: 256)
        pa_ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The CA stores of the process, one per `CASource`, each built once whatever the number of transfers that ask for it
/// at the same moment (the first parses the bundle, the others wait for it and share it).
///
/// A source's file is looked at (`stat`) for each transfer: when it was replaced or changed, its store is built
/// again and the old one is freed once the connections using it end. A source that cannot be read is not kept, so
/// each transfer reports it.
final class CAStoreCache: Sendable {
    /// The stores of every `CurlHTTPClient` of the process.
    static let shared = CAStoreCache()

    private struct Entry {
        let store: CAStore
        let version: FileVersion?
    }

    private let entries = Mutex<[CASource: Entry]>([:])
    private let loader: @Sendable (CASource) throws(CAStore.LoadError) -> CAStore
    private let loadCount = Atomic<Int>(0)

    /// A cache whose stores `loader` builds (`CAStore.load` but in tests).
    init(loader: @escaping @Sendable (CASource) throws(CAStore.LoadError) -> CAStore = CAStore.load) {
        self.loader = loader
    }

    /// How many stores were built (once per source and version of its file).
    var loads: Int { loadCount.load(ordering: .relaxed) }

    /// The store of `source`, built now when there is none yet or its file changed.
    func store(for source: CASource) throws(CAStore.LoadError) -> CAStore {
        let version = source.file.flatMap { FileVersion(path: $0) }
        return try entries.withLock { entries throws(CAStore.LoadError) -> CAStore in
            if let entry = entries[source], entry.version == version { return entry.store }
            loadCount.add(1, ordering: .relaxed)
            let store = try loader(source)
            entries[source] = Entry(store: store, version: version)
            return store
        }
    }
}
