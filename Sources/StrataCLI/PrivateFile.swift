import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Files that hold secrets (the key file, the checkpoint key) must be readable by their owner
/// only, as ssh has it for a private key: a looser mode is refused before the file is used, so
/// that a secret copied or unpacked with the umask's mode is noticed, not served from.
enum PrivateFile {
    /// Refuses (exit 2) a file at `path` whose mode lets its group or others in; `what` names it
    /// in the message ("the key file"). A file that cannot be found is the caller's to report.
    static func requireOwnerOnly(_ path: String, _ what: String) throws(CommandFailure) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw CommandFailure.environment("cannot read \(what) \(path): \(String(cString: strerror(errno)))")
        }
        let mode = Int(info.st_mode) & 0o777
        guard mode & 0o077 == 0 else {
            throw CommandFailure.environment(
                "\(what) \(path) has mode 0\(String(mode, radix: 8)); it holds secrets and must be readable by its "
                    + "owner only (chmod 600 \(path))")
        }
    }
}
