/// When the ArcGIS Maps SDK lets the keychain hand out stored credentials; accepted by the `makePersistent` and
/// `setupPersistentCredentialStorage` functions so that code written for the SDK compiles unchanged.
///
/// Linux has no keychain with these states. Whatever the value, a persistent `ArcGISCredentialStore` keeps its tokens
/// in the desktop keyring (the Secret Service, readable while the user's session has it unlocked) or, without one,
/// in the store file (mode 0600 in a 0700 folder of the user's XDG state directory): readable by the user's processes
/// whenever the user's files are, which is closest to `afterFirstUnlockThisDeviceOnly` — neither leaves the machine
/// by itself.
public enum KeychainAccess: Sendable, Hashable {
    /// After the first unlock since boot.
    case afterFirstUnlock
    /// After the first unlock since boot, on this device only.
    case afterFirstUnlockThisDeviceOnly
    /// While the device is unlocked.
    case whenUnlocked
    /// While the device is unlocked, on this device only.
    case whenUnlockedThisDeviceOnly
    /// While a passcode is set, on this device only.
    case whenPasscodeSetThisDeviceOnly
}
