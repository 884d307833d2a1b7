internal import CPortalAuthOpenSSL

/// Cryptographically secure random bytes from OpenSSL's CSPRNG.
package enum SecureRandom {
    /// `count` random bytes.
    package static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
        do { try OpenSSLLibrary.loadCrypto() } catch { throw .libraryUnavailable(error) }
        var bytes = [UInt8](repeating: 0, count: count)
        let result = bytes.withUnsafeMutableBufferPointer { pa_RAND_bytes($0.baseAddress, Int32(count)) }
        guard result == 1 else { throw .randomUnavailable() }
        return bytes
    }

    /// A base64url string carrying `byteCount` random bytes (32 bytes → 43 characters, 256 bits).
    package static func token(byteCount: Int = 32) throws(CryptoError) -> String {
        Base64URL.encode(try bytes(byteCount))
    }
}
