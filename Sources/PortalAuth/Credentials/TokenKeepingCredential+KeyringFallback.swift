extension OAuthUserCredential {
    /// Why the tokens of this credential's last refresh were kept in the store file (0600) instead of the desktop
    /// keyring, which could not take them when they came (locked, gone, not answering); nil when they went to the
    /// keyring or the file was chosen anyway. They move into the keyring at the next use while it answers.
    package var keyringFallback: String? { keeper.keyringFallback }
}

extension IAPCredential {
    /// Why the tokens of this credential's last refresh were kept in the store file (0600) instead of the desktop
    /// keyring, which could not take them when they came (locked, gone, not answering); nil when they went to the
    /// keyring or the file was chosen anyway. They move into the keyring at the next use while it answers.
    package var keyringFallback: String? { keeper.keyringFallback }
}
