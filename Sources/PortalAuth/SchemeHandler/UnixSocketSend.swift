import Glibc

/// Sends all of `bytes` on the stream socket `fd`, as the line protocols of the local sockets do (the scheme redirect
/// channel's, the agent's): with `MSG_NOSIGNAL` (a peer gone is an error, not a SIGPIPE), again after `EINTR`, and,
/// when the socket's buffer is full (`EAGAIN`), again once `waitForRoom` returns true (false gives up).
///
/// - Returns: nil once everything is sent, else the `errno` of the failure (0 when the peer took nothing).
func sendAll<Failure: Error>(_ bytes: [UInt8], on fd: Int32, waitForRoom: () throws(Failure) -> Bool)
    throws(Failure) -> Int32?
{
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if written < 0 && errno == EINTR { continue }
        if written < 0 && errno == EAGAIN {
            if try waitForRoom() { continue }
            return EAGAIN
        }
        guard written > 0 else { return written < 0 ? errno : 0 }
        offset += written
    }
    return nil
}
