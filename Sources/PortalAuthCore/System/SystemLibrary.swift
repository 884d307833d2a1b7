/// A C library that PortalAuth opens on first use (libcurl, libcrypto, libssl) could not be opened.
///
/// The message names the file, the loader's reason and the Debian package that installs it, for example
/// "libcurl.so.4 could not be loaded (…: cannot open shared object file…); install the Debian package libcurl4
/// (to build portal-auth: libcurl4-openssl-dev libssl-dev)".
package struct SystemLibraryError: CategorizedError, CustomStringConvertible, Equatable {
    /// What failed and what to install.
    package let description: String

    /// A local problem: the machine lacks a package.
    package var category: ErrorCategory { .local }

    init(_ description: String) {
        self.description = description
    }
}
