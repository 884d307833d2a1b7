internal import CPortalAuthOpenSSL

/// SHA-256 through OpenSSL's EVP interface.
package enum SHA256Digest {
    /// The 32-byte digest of `bytes`.
    package static func hash<Bytes: Sequence>(_ bytes: Bytes) throws(CryptoError) -> [UInt8]
    where Bytes.Element == UInt8 {
        do { try OpenSSLLibrary.loadCrypto() } catch { throw .libraryUnavailable(error) }
        let input = Array(bytes)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = input.withUnsafeBytes { source in
            digest.withUnsafeMutableBufferPointer { target in
                pa_EVP_Digest(source.baseAddress, source.count, target.baseAddress, &length, pa_EVP_sha256(), nil)
            }
        }
        guard ok == 1 else { throw .digestFailed() }
        return Array(digest.prefix(Int(length)))
    }
}
