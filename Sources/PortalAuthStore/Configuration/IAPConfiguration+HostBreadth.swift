extension IAPConfiguration {
    /// A warning for each entry of ``hostsBehindProxy`` that covers every host (`*`) or a whole top-level domain
    /// (`*.com`): the IAP access token would go to every such server. `iap check` shows them, and a sign-in reports
    /// them to its `SignInObserver` before the browser opens.
    public var broadHostPatternWarnings: [String] {
        hostsBehindProxy.enumerated().compactMap { index, pattern in
            IAPConfigurationRules.hostPatternBreadthWarning(pattern).map { "`hosts_behind_proxy[\(index)]` \($0)" }
        }
    }
}
