import Glibc

/// The file of an `ipc://` endpoint, looked at before libzmq binds it. libzmq's bind first
/// unlinks whatever is at the path, to clear a socket file that an earlier run left behind: so a
/// mistyped endpoint naming `events.db` deleted the event store while serve said it was ready,
/// and a second process given the path of a running one took its clients over without a word
/// (TCP refuses both with EADDRINUSE).
///
/// Nothing closes the window between this look and libzmq's unlink; it is there to stop
/// mistakes, not a process racing for the same path on purpose.
enum IPCPath {
    /// The longest path a Unix socket address holds (`sun_path`, less its terminating NUL).
    static let maximumLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// Why binding `endpoint` would destroy something, or cannot work, with the errno to report;
    /// nil for a path where nothing is, a socket file nobody listens on, `ipc://*` (libzmq makes a
    /// new path), the abstract namespace (`ipc://@…`, no file), or another transport.
    static func problem(binding endpoint: String) -> (reason: String, code: Int32)? {
        guard endpoint.hasPrefix("ipc://") else { return nil }
        let path = String(endpoint.dropFirst("ipc://".count))
        // A path too long for a socket is `Endpoint`'s to refuse, before this look.
        guard path != "*", !path.hasPrefix("@") else { return nil }
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }  // nothing there, or libzmq says why
        switch status.st_mode & S_IFMT {
        case S_IFSOCK:
            break
        case S_IFLNK:
            return ("\(path) is a symbolic link, which a bind would delete; name the socket's own path", EEXIST)
        case S_IFDIR:
            return ("\(path) is a directory; name a socket file in it", EISDIR)
        default:
            return ("\(path) is a file, not a socket: a bind would delete it", EEXIST)
        }
        let listening = listener(at: path)
        switch listening {
        case ECONNREFUSED:
            return nil  // a socket file left behind: libzmq replaces it
        case 0, EAGAIN, EINPROGRESS:
            return ("another process is listening on \(path)", EADDRINUSE)
        default:
            return ("\(path) is a socket that cannot be reached (\(String(cString: strerror(listening)))), "
                + "so whether another process listens on it is unknown", listening)
        }
    }

    /// Connects to the socket file at `path` without waiting, and says how that went: 0 when it
    /// connected, EAGAIN when a listener's queue is full (someone listens), ECONNREFUSED when
    /// nobody listens, another errno when it cannot be told.
    private static func listener(at path: String) -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
            | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.utf8.enumerated() { bytes[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0 ? 0 : errno
    }
}
