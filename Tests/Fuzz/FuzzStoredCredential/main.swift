import FuzzChecks
import FuzzSupport

// libFuzzer on the stored-credential reader (store document and entries).
runLibFuzzer(FuzzEntryPoints.storedCredential)
