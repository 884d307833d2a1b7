import FuzzChecks
import FuzzSupport

// libFuzzer on the token-response parser.
runLibFuzzer(FuzzEntryPoints.tokenResponse)
