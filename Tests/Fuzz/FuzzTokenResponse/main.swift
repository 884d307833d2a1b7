import PortalAuth
import FuzzSupport

// libFuzzer on the token-response parser.
runLibFuzzer(FuzzEntryPoints.tokenResponse)
