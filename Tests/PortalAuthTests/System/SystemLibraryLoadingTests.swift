import Testing
@testable import PortalAuth
@testable import PortalAuthCore

/// libcurl, libcrypto and libssl are opened on first use (issue 17): the loader's messages, and the real
/// libraries through the wrappers.
@Suite("C libraries opened on first use")
struct SystemLibraryLoadingTests {
    @Test("a missing library: the file, the loader's reason and the Debian packages, no crash")
    func missingLibrary() throws {
        let failure = try #require(
            DynamicLibraryProbe.failure(
                soname: "libportal-auth-missing.so.9", package: "libcurl4",
                buildPackages: "libcurl4-openssl-dev libssl-dev",
                function: "curl_easy_init"))
        #expect(failure.category == .local)
        #expect(failure.description.hasPrefix("libportal-auth-missing.so.9 could not be loaded ("))
        #expect(failure.description.contains("cannot open shared object file"))
        #expect(
            failure.description.hasSuffix(
                "; install the Debian package libcurl4 (to build portal-auth: libcurl4-openssl-dev libssl-dev)"))
    }

    @Test("a library without a function the library calls: named, with the package to update")
    func missingFunction() throws {
        let failure = try #require(
            DynamicLibraryProbe.failure(
                soname: "libc.so.6", package: "libc6", buildPackages: "libc6-dev", function: "pa_no_such_function"))
        #expect(
            failure.description
                == "libc.so.6 has no function pa_no_such_function: the installed version is too old; update the Debian package libc6"
        )
    }

    @Test("libsecret's loader (no package: the keyring's error gives the advice) names the file and the reason only")
    func missingLibraryWithoutPackage() throws {
        let missing = try #require(
            DynamicLibraryProbe.failure(
                soname: "libportal-auth-missing.so.9", package: nil, buildPackages: nil, function: "g_bus_get_sync"))
        #expect(missing.description.hasPrefix("libportal-auth-missing.so.9 could not be loaded ("))
        #expect(missing.description.hasSuffix(")"))
        #expect(!missing.description.contains("install"))
        let old = try #require(
            DynamicLibraryProbe.failure(
                soname: "libc.so.6", package: nil, buildPackages: nil, function: "pa_no_such_function"))
        #expect(old.description == "libc.so.6 has no function pa_no_such_function: the installed version is too old")
    }

    @Test("a package without build packages: the advice names the package only")
    func missingLibraryWithoutBuildPackages() throws {
        let failure = try #require(
            DynamicLibraryProbe.failure(
                soname: "libportal-auth-missing.so.9", package: "libsecret-1-0", buildPackages: nil,
                function: "g_bus_get_sync"))
        #expect(failure.description.hasSuffix("; install the Debian package libsecret-1-0"))
    }

    @Test("a library and function that exist load")
    func present() {
        #expect(
            DynamicLibraryProbe.failure(
                soname: "libc.so.6", package: "libc6", buildPackages: "libc6-dev", function: "malloc") == nil)
    }

    @Test("libcurl and OpenSSL load through the wrappers and report their versions")
    func versions() throws {
        try CurlLibrary.load()
        try OpenSSLLibrary.loadCrypto()
        #expect(LinkedLibraryVersions.curl().first?.isNumber == true, "\(LinkedLibraryVersions.curl())")
        #expect(LinkedLibraryVersions.openSSL().hasPrefix("OpenSSL "))
        let digest = try SHA256Digest.hash(Array("abc".utf8))
        #expect(
            digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
