public import Foundation
import PortalAuthCore
import PortalAuthTransport

/// A client certificate with its private key, read from a PKCS#12 file (`NetworkCredential.certificate`), as in the
/// ArcGIS Maps SDK.
///
/// The PKCS#12 bytes and their password stay in memory for the transport only; `description` never shows them.
public struct CertificateCredential: Sendable, CustomStringConvertible {
    /// The name of the identity: the certificate subject's common name (its whole subject when it has none).
    public var identityName: String {
        let parts = info.subject.split(separator: "/").filter { $0.hasPrefix("CN=") }
        return parts.first.map { String($0.dropFirst(3)) } ?? info.subject
    }
    /// The PKCS#12 file it was read from.
    public let file: URL
    /// The certificate: subject, issuer, validity, fingerprint.
    public let info: CertificateInfo
    /// What libcurl is given.
    let transport: TransportCredentials.ClientCertificate

    /// Opens `file` with `password` and checks the certificate's validity period at `now`.
    init(file: URL, password: String, now: Date) throws(CertificateImportError) {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory)
            let reason =
                !exists
                ? "no such file"
                : isDirectory.boolValue
                    ? "it is a directory"
                    : !FileManager.default.isReadableFile(atPath: file.path)
                        ? "permission denied" : error.localizedDescription
            throw CertificateImportError(.fileUnreadable, file: file, detail: reason)
        }
        let info: CertificateInfo
        do {
            info = try CertificateInfo(PKCS12Identity.open(data, password: password))
        } catch let error as PKCS12Error {
            throw CertificateImportError(error, file: file)
        } catch {
            throw CertificateImportError(.notPKCS12, file: file, detail: "\(error)")
        }
        if let notAfter = info.notAfter, notAfter < now {
            throw CertificateImportError(
                .certificateExpired, file: file, detail: "(\(info.subject)) expired at \(notAfter.ISO8601Format())")
        }
        if let notBefore = info.notBefore, notBefore > now {
            throw CertificateImportError(
                .certificateExpired, file: file,
                detail: "(\(info.subject)) is not valid before \(notBefore.ISO8601Format())")
        }
        self.file = file
        self.info = info
        self.transport = TransportCredentials.ClientCertificate(pkcs12: data, password: password)
    }

    public var description: String { "client certificate \(info.subject) from \(file.path)" }
}
