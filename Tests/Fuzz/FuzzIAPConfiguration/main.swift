import FuzzChecks
import FuzzSupport

// libFuzzer on the IAP configuration loader.
runLibFuzzer(FuzzEntryPoints.iapConfiguration)
