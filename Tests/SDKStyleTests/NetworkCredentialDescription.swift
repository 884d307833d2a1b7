import PortalAuth

/// What an app shows of a stored network credential: a `switch` over `NetworkCredential`, as the SDK's samples do.
func describe(_ credential: NetworkCredential) -> String {
    switch credential {
    case .password(let passwordCredential):
        return "Password for \(passwordCredential.username)"
    case .certificate(let certificateCredential):
        return "Certificate of \(certificateCredential.identityName)"
    case .serverTrust:
        return "Trusted server"
    }
}

/// What the toolkit's certificate picker says of an import error.
func message(for error: CertificateImportError?) -> String {
    let defaultMessage = "The certificate file or password was invalid."
    guard let error else { return defaultMessage }
    switch error {
    case .invalidData:
        return "The certificate file was invalid."
    case .invalidPassword:
        return "The password was invalid."
    default:
        return defaultMessage
    }
}
