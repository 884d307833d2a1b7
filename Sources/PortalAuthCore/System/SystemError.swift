import Glibc

/// A failed system call: which call, on what, and the `errno` text.
struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The system call that failed, e.g. "bind".
    let call: String
    /// The `errno` value.
    let errno: Int32

    var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

/// Runs a system call, retrying on `EINTR`, and turns a `-1` result into a `SystemError`.
///
/// ```swift
/// let fd = try syscall("socket") { socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
/// ```
@discardableResult
func syscall<Result: BinaryInteger>(_ name: String, _ body: () -> Result) throws(SystemError) -> Result {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = Glibc.errno
        if code == EINTR { continue }
        throw SystemError(call: name, errno: code)
    }
}
