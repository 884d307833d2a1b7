import FuzzChecks
import FuzzSupport

// libFuzzer on the loopback listener's request parser and callback evaluator.
runLibFuzzer(FuzzEntryPoints.callbackRequest)
