import FuzzChecks
import FuzzSupport

// libFuzzer on the host-pattern matcher.
runLibFuzzer(FuzzEntryPoints.hostPattern)
