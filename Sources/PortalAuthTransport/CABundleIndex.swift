internal import CPortalAuthOpenSSL
import Foundation
import Synchronization

/// The certificates of a PEM CA bundle, indexed by subject name and parsed only when a verification asks for that
/// name: an OpenSSL look-up method (`X509_LOOKUP_METHOD`) added to a `CAStore`'s store, as OpenSSL's own folder
/// look-up (`CURLOPT_CAPATH`, `c_rehash` folders) finds certificates by name in files as needed.
///
/// Reading the bundle decodes each certificate's PEM text and parses only its subject name (no public key, which
/// OpenSSL 3.0 decodes through its provider machinery at about 0.1 ms a certificate). When a verification looks
/// for an issuer the store does not hold yet, every certificate of that name is parsed and added to the store,
/// once: from then on OpenSSL finds them in the store itself, exactly as if the whole file had been loaded, and a
/// chain is verified against the same certificates.
///
/// A bundle is indexed only when it holds nothing but plain certificates (`CERTIFICATE` blocks without PEM
/// headers) whose structure leads to a subject name; anything else (`TRUSTED CERTIFICATE` trust settings, CRLs,
/// keys, a damaged block) makes `read` return `nil`, and the file is loaded whole by `X509_STORE_load_file`, which
/// also reports what is wrong with it.
final class CABundleIndex: @unchecked Sendable {
    // @unchecked: `names` and `certificates` are set while reading and never changed; `added` is behind its lock.

    /// Each certificate's subject name, parsed (`X509_NAME`, compared with `X509_NAME_cmp`), freed in `deinit`.
    private var names: [OpaquePointer] = []
    /// Each certificate's DER bytes, in the file's order.
    private var certificates: [[UInt8]] = []
    /// Which certificates were parsed and added to the store.
    private let added = Mutex<Set<Int>>([])

    private init() {}

    deinit {
        for name in names { pa_X509_NAME_free(name) }
    }

    /// How many certificates the bundle holds.
    var count: Int { certificates.count }

    /// How many were parsed and added to the store, by the look-ups of verifications.
    var parsed: Int { added.withLock { $0.count } }

    /// Indexes the bundle at `path`; `nil` when it holds anything but plain certificates, none, or cannot be read
    /// (the caller then loads it whole, which reports why). libcrypto is loaded.
    static func read(_ path: String) -> CABundleIndex? {
        guard let bio = pa_BIO_new_file(path, "r") else {
            pa_ERR_clear_error()
            return nil
        }
        defer { _ = pa_BIO_free(bio) }
        let index = CABundleIndex()
        while true {
            var label: UnsafeMutablePointer<CChar>?
            var header: UnsafeMutablePointer<CChar>?
            var data: UnsafeMutablePointer<UInt8>?
            var length = 0
            guard pa_PEM_read_bio(bio, &label, &header, &data, &length) == 1 else {
                // The end of the file reads as "no start line"; anything else is a damaged block.
                let error = pa_ERR_peek_last_error()
                pa_ERR_clear_error()
                let ended = ERR_GET_LIB(error) == ERR_LIB_PEM && ERR_GET_REASON(error) == PEM_R_NO_START_LINE
                return ended && index.count > 0 ? index : nil
            }
            defer {
                pa_CRYPTO_free(label, #fileID, #line)
                pa_CRYPTO_free(header, #fileID, #line)
                pa_CRYPTO_free(data, #fileID, #line)
            }
            guard let label, let header, let data, length > 0,
                ["CERTIFICATE", "X509 CERTIFICATE"].contains(String(cString: label)), header.pointee == 0
            else { return nil }
            let der = UnsafeBufferPointer(start: data, count: length)
            guard let subject = Self.subjectRange(in: der) else { return nil }
            var cursor: UnsafePointer<UInt8>? = UnsafePointer(data + subject.lowerBound)
            guard let name = pa_d2i_X509_NAME(nil, &cursor, subject.count) else {
                pa_ERR_clear_error()
                return nil
            }
            index.names.append(name)
            index.certificates.append(Array(der))
        }
    }

    /// Where the subject name lies in a certificate's DER: Certificate ::= SEQUENCE { tbsCertificate SEQUENCE {
    /// [0] version OPTIONAL, serialNumber, signature, issuer, validity, subject, … }, … }; `nil` when the bytes do
    /// not have that shape.
    static func subjectRange(in der: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        guard let certificate = element(in: der, at: 0), certificate.tag == 0x30, certificate.end == der.count,
            let tbs = element(in: der, at: certificate.content), tbs.tag == 0x30
        else { return nil }
        var position = tbs.content
        if let version = element(in: der, at: position, limit: tbs.end), version.tag == 0xA0 {
            position = version.end
        }
        // serialNumber INTEGER, signature AlgorithmIdentifier, issuer Name, validity Validity, then subject Name.
        for expected: UInt8 in [0x02, 0x30, 0x30, 0x30] {
            guard let field = element(in: der, at: position, limit: tbs.end), field.tag == expected else { return nil }
            position = field.end
        }
        guard let subject = element(in: der, at: position, limit: tbs.end), subject.tag == 0x30 else { return nil }
        return position..<subject.end
    }

    /// The DER element at `start` (definite length, at most four length bytes) within `limit`: its tag, where its
    /// content starts and where it ends.
    private static func element(in der: UnsafeBufferPointer<UInt8>, at start: Int, limit: Int? = nil)
        -> (tag: UInt8, content: Int, end: Int)?
    {
        let limit = min(limit ?? der.count, der.count)
        guard start + 2 <= limit else { return nil }
        let tag = der[start]
        var length = Int(der[start + 1])
        var content = start + 2
        if length & 0x80 != 0 {
            let count = length & 0x7F
            guard (1...4).contains(count), content + count <= limit else { return nil }
            length = der[content..<(content + count)].reduce(0) { $0 << 8 | Int($1) }
            content += count
        }
        guard length <= limit - content else { return nil }
        return (tag, content, content + length)
    }

    // MARK: - The look-up method

    /// Adds the index to `store` as a look-up method; the store keeps it (and frees it with itself).
    func attach(to store: OpaquePointer) -> Bool {
        guard let method = Self.method, let lookup = pa_X509_STORE_add_lookup(store, method) else { return false }
        let data = Unmanaged.passRetained(self).toOpaque()
        guard pa_X509_LOOKUP_set_method_data(lookup, data) == 1 else {
            Unmanaged<CABundleIndex>.fromOpaque(data).release()
            return false
        }
        return true
    }

    /// Parses the certificates named `name` not added yet and adds them to `store`; whether the bundle holds any.
    private func add(named name: OpaquePointer, to store: OpaquePointer) -> Bool {
        var found = false
        added.withLock { added in
            for (position, candidate) in names.enumerated() where pa_X509_NAME_cmp(candidate, name) == 0 {
                found = true
                guard !added.contains(position) else { continue }
                added.insert(position)
                certificates[position].withUnsafeBufferPointer { der in
                    var cursor = der.baseAddress
                    // A certificate OpenSSL cannot parse is left out, as a look-up in a folder leaves out a bad file.
                    guard let certificate = pa_d2i_X509(nil, &cursor, der.count) else { return }
                    _ = pa_X509_STORE_add_cert(store, certificate)  // takes its own reference
                    pa_X509_free(certificate)
                }
            }
        }
        pa_ERR_clear_error()
        return found
    }

    /// The look-up method of every index (made once), or `nil` when OpenSSL could not make it.
    // nonisolated(unsafe): set once by Swift's thread-safe global initialisation, then only read (by OpenSSL too).
    nonisolated(unsafe) private static let method: OpaquePointer? = {
        guard let method = pa_X509_LOOKUP_meth_new("PortalAuth CA bundle index") else { return nil }
        guard pa_X509_LOOKUP_meth_set_get_by_subject(method, getBySubject) == 1,
            pa_X509_LOOKUP_meth_set_free(method, releaseIndex) == 1
        else { return nil }
        return method
    }()

    /// OpenSSL's look-up by subject: adds the certificates named `name` to the store and hands one back as the store
    /// holds it, without a reference of its own (as OpenSSL's own look-ups do: the caller takes one).
    private static let getBySubject: X509_LOOKUP_get_by_subject_fn = { lookup, type, name, object in
        guard type == X509_LU_X509, let lookup, let name, let data = pa_X509_LOOKUP_get_method_data(lookup),
            let store = pa_X509_LOOKUP_get_store(lookup)
        else { return 0 }
        let index = Unmanaged<CABundleIndex>.fromOpaque(data).takeUnretainedValue()
        guard index.add(named: name, to: store) else { return 0 }
        guard let object else { return 1 }
        guard pa_X509_STORE_lock(store) == 1 else { return 0 }
        let certificate = pa_X509_OBJECT_retrieve_by_subject(pa_X509_STORE_get0_objects(store), X509_LU_X509, name)
            .flatMap { pa_X509_OBJECT_get0_X509($0) }
        _ = pa_X509_STORE_unlock(store)
        // The store never drops a certificate, so the one found stays valid; set1 takes a reference, given back
        // at once (the store's own keeps it alive).
        guard let certificate, pa_X509_OBJECT_set1_X509(object, certificate) == 1 else { return 0 }
        pa_X509_free(certificate)
        return 1
    }

    /// Frees the index when the store frees its look-up.
    private static let releaseIndex: @convention(c) (OpaquePointer?) -> Void = { lookup in
        guard let lookup, let data = pa_X509_LOOKUP_get_method_data(lookup) else { return }
        Unmanaged<CABundleIndex>.fromOpaque(data).release()
    }
}
