import StrataCore
import Testing

@Suite struct PathNameTests {
    /// What Foundation's `deletingLastPathComponent` gives, for the paths it can take too, and
    /// for the one-character paths it traps on.
    @Test(arguments: [
        ("a/b", "a"), ("/a", "/"), ("a", ""), ("a/b/", "a"), ("a//b", "a"), ("/", "/"), ("//", "/"), ("", ""),
        ("./a", "."), ("/a/b/c.db", "/a/b"), ("d", ""), (".", ""), ("d/", ""), ("d/k", "d"), ("é/x", "é"),
    ])
    func theDirectoryOfAPath(_ path: String, _ directory: String) {
        #expect(PathName.directory(of: path) == directory)
    }

    @Test(arguments: [("d/", "d"), ("d//", "d"), ("/", "/"), ("//", "/"), ("a/b", "a/b"), ("", ""), ("/a/", "/a")])
    func aPathWithoutTheSlashesItEndsWith(_ path: String, _ trimmed: String) {
        #expect(PathName.withoutTrailingSlashes(path) == trimmed)
    }
}
