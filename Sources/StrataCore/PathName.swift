/// The directory part of a path, worked out on its text alone.
///
/// Foundation's `NSString.deletingLastPathComponent` traps on a path of one character
/// (`"d"`, `"."`, `"d/"`) on Linux, which `--data d` or `--keys k` in the current directory
/// would reach; this gives what it gives for every other path.
public enum PathName {
    /// `path` without its last component: `"a/b"` → `"a"`, `"/a"` → `"/"`, `"a"` → `""`,
    /// `"a/b/"` → `"a"`, `"a//b"` → `"a"`, `"/"` → `"/"`.
    public static func directory(of path: String) -> String {
        var bytes = Array(path.utf8)
        let slash = UInt8(ascii: "/")
        func dropTrailingSlashes() {
            while bytes.count > 1, bytes.last == slash { bytes.removeLast() }
        }
        dropTrailingSlashes()
        if bytes == [slash] { return "/" }
        guard let last = bytes.lastIndex(of: slash) else { return "" }
        bytes.removeSubrange(last...)
        if bytes.isEmpty { return "/" }
        dropTrailingSlashes()
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `path` without the slashes it ends with (`"d/"` → `"d"`), but `"/"` stays `"/"`.
    public static func withoutTrailingSlashes(_ path: String) -> String {
        var path = path
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path
    }
}
