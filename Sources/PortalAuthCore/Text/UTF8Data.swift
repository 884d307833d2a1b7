package import Foundation

extension Data {
    /// The UTF-8 bytes of `text`, copied in one call.
    ///
    /// `Data(text.utf8)`, Foundation's generic initializer from a sequence, has the runtime scan every protocol
    /// conformance of the binary on its first use in a process (about 0.2 ms of every `portal-auth refresh`, perf);
    /// this one calls no generic code.
    package init(utf8Of text: String) {
        var text = text
        self = text.withUTF8 { bytes in bytes.baseAddress.map { Data(bytes: $0, count: bytes.count) } ?? Data() }
    }
}
