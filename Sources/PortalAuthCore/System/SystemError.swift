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

    package var description: String { "\(call): \(String(cString: strerror(errno)))" }
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
