/// The version of PortalAuth and its `portal-auth` tool, kept in this one place.
package enum PortalAuthVersion {
    /// The semantic version string, as `portal-auth --version` prints it.
    public static let string = "0.1.0"
}
