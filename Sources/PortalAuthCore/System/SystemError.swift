package import Foundation
import Glibc

/// A failed system call: which call, on what, and the `errno` text.
package struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The system call that failed, e.g. "bind".
    package let call: String
    /// The `errno` value.
    package let errno: Int32

    package init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    package var description: String { MessagePart.given("", call, ": ") + String(cString: strerror(errno)) }
}

/// Runs a system call, retrying on `EINTR`, and turns a `-1` result into a `SystemError`.
///
/// ```swift
/// let fd = try syscall("socket") { socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
/// ```
@discardableResult
package func syscall<Result: BinaryInteger>(_ name: String, _ body: () -> Result) throws(SystemError) -> Result {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = Glibc.errno
        if code == EINTR { continue }
        throw SystemError(call: name, errno: code)
    }
}

/// Writes all of `bytes` to `descriptor`, continuing after short writes and retrying on `EINTR`; a write that
/// accepts nothing fails with `EIO` rather than looping.
package func writeFully(_ descriptor: Int32, _ bytes: some ContiguousBytes) throws(SystemError) {
    let failure: Int32 = bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 && Glibc.errno == EINTR { continue }
            if written < 0 { return Glibc.errno }
            if written == 0 { return EIO }
            offset += written
        }
        return 0
    }
    if failure != 0 { throw SystemError(call: "write", errno: failure) }
}
