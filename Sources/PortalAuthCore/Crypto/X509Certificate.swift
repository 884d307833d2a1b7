internal import CPortalAuthOpenSSL
package import Foundation
import Glibc

/// One X.509 certificate held by OpenSSL (`X509 *`), freed in `deinit`; what `CertificateInfo` reads from it.
package final class X509Certificate {
    package let handle: OpaquePointer

    /// Takes ownership of `handle`.
    package init(owning handle: OpaquePointer) {
        self.handle = handle
    }

    /// Parses DER bytes; `nil` when they are not one certificate (or libcrypto is missing, which cannot be when
    /// the bytes came from libcurl's OpenSSL connection).
    package convenience init?(der: Data) {
        guard (try? OpenSSLLibrary.loadCrypto()) != nil else { return nil }
        let parsed: OpaquePointer? = der.withUnsafeBytes { bytes in
            guard let base = bytes.bindMemory(to: UInt8.self).baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            return pa_d2i_X509(nil, &cursor, bytes.count)
        }
        guard let parsed else {
            pa_ERR_clear_error()
            return nil
        }
        self.init(owning: parsed)
    }

    deinit { pa_X509_free(handle) }

    // MARK: - Reading

    /// The DER encoding.
    package var der: Data {
        var buffer: UnsafeMutablePointer<UInt8>?
        let length = pa_i2d_X509(handle, &buffer)
        guard length > 0, let buffer else { return Data() }
        defer { pa_CRYPTO_free(buffer, #fileID, #line) }
        return Data(bytes: buffer, count: Int(length))
    }

    /// The subject as OpenSSL's one-line form, e.g. `/CN=gis.example.com/O=Example`.
    package var subject: String { Self.oneLine(pa_X509_get_subject_name(handle)) }
    /// The issuer, in the same form.
    package var issuer: String { Self.oneLine(pa_X509_get_issuer_name(handle)) }

    /// The start of the validity period.
    package var notBefore: Date? { Self.date(pa_X509_get0_notBefore(handle)) }
    /// The end of the validity period.
    package var notAfter: Date? { Self.date(pa_X509_get0_notAfter(handle)) }

    /// Whether the certificate is issued by its own subject (its signature is not checked).
    package var isSelfIssued: Bool { pa_X509_self_signed(handle, 0) == 1 }

    /// Whether the certificate names `host` (a DNS name, with wildcards as TLS allows them, or an IP address)
    /// in its subject alternative names, or in its common name when it has none.
    package func matches(host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("[") && name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, name, &v4) == 1 || inet_pton(AF_INET6, name, &v6) == 1 {
            return pa_X509_check_ip_asc(handle, name, 0) == 1
        }
        return pa_X509_check_host(handle, name, name.utf8.count, 0, nil) == 1
    }

    /// Whether `key` (`EVP_PKEY *`) is the private key of this certificate.
    func isPaired(with key: OpaquePointer) -> Bool {
        let paired = pa_X509_check_private_key(handle, key) == 1
        pa_ERR_clear_error()
        return paired
    }

    // MARK: - Helpers

    private static func oneLine(_ name: OpaquePointer?) -> String {
        guard let name else { return "" }
        var buffer = [CChar](repeating: 0, count: 512)
        guard pa_X509_NAME_oneline(name, &buffer, Int32(buffer.count)) != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date? {
        guard let time else { return nil }
        var parts = tm()
        guard pa_ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}
