import EventStore
import Foundation
import StrataTesting
import Testing

/// Files the command line writes whole reach the disk before it returns: the file, then the
/// directory that holds its new name, then the entries of directories it created. Seen
/// through the system calls themselves (strace), since only a power cut could show it otherwise.
/// A temporary file a killed run left behind never stops the next write.
@Suite("Files written whole")
struct AtomicFileTests {
    @Test func aNewKeyFileAndTheDirectoriesMadeForItAreSynced() throws {
        try withTemporaryDirectory { dir in
            let data = dir.path + "/new/sub"
            let calls = try systemCalls(of: ["keys", "new", "svc", "--scope", "commands", "--data", data], in: dir)
            let renamed = try #require(
                calls.firstIndex { $0.contains("rename") && $0.contains("\"\(data)/keys.json\")") },
                "the key file is moved into place")
            let later = Array(calls[renamed...])
            #expect(later.syncs(directory: data), "the directory holding the new name is synced")
            #expect(later.syncs(directory: dir.path + "/new"), "the created directory's entry is synced")
            #expect(later.syncs(directory: dir.path), "and the entry of the directory created above it")
        }
    }

    /// A second key goes through the same rename: the file existed, so only its directory.
    @Test func aRewrittenKeyFileSyncsItsDirectory() throws {
        try withTemporaryDirectory { dir in
            try strata(["keys", "new", "first", "--scope", "commands", "--data", dir.path], expecting: 0)
            let calls = try systemCalls(
                of: ["keys", "new", "second", "--scope", "history", "--data", dir.path], in: dir)
            let renamed = try #require(calls.firstIndex { $0.contains("rename") && $0.contains("/keys.json\")") })
            #expect(Array(calls[renamed...]).syncs(directory: dir.path))
        }
    }

    /// A temporary file left by a killed run whose process id comes round again (pid 1 in a
    /// container, every time) has this run's own name: it is replaced, not a reason to fail.
    /// A test cannot choose its child's id, so strace makes getpid answer the one left behind.
    @Test func aTemporaryFileLeftUnderTheSameProcessIdIsReplaced() throws {
        try withTemporaryDirectory { dir in
            let pid = 4242
            let left = ["checkpoint.key", "checkpoint.pub"].map { dir.path + "/\($0).tmp-\(pid)" }
            for path in left { try writeText("left by a killed run", to: path) }
            let result = try ChildProcess.run(
                URL(fileURLWithPath: try strace()),
                ["-f", "-qq", "-o", "/dev/null", "-e", "trace=getpid", "-e", "inject=getpid:retval=\(pid)",
                 ChildProcess.product("strata").path, "keys", "checkpoint", "--data", dir.path])
            #expect(result.exitCode == 0, "\(result.stderr)")
            let made = try #require(FileManager.default.contents(atPath: dir.path + "/checkpoint.key"))
            let key = try CheckpointKey(json: made)
            #expect(result.stdout == key.publicKeyHex + "\n")
            #expect(try String(contentsOfFile: dir.path + "/checkpoint.pub", encoding: .utf8) == key.publicKeyLine)
            for path in left { #expect(!FileManager.default.fileExists(atPath: path), "\(path) is gone") }
        }
    }

    /// A data directory or key file named by one character, relative to the current directory
    /// (`--data d`), is written like any other path.
    @Test(arguments: [["--data", "d"], ["--data", ".", "--keys", "k"], ["--data", "d/"]])
    func aOneCharacterPathIsWritten(_ options: [String]) throws {
        try withTemporaryDirectory { dir in
            let result = try ChildProcess.run(
                URL(fileURLWithPath: "/bin/sh"),
                ["-c", "cd \"$DIR\" && exec \"$@\"", "sh", ChildProcess.product("strata").path, "keys", "new", "svc",
                 "--scope", "commands"] + options,
                environment: ["DIR": dir.path])
            #expect(result.exitCode == 0, "\(result.stderr)")
            #expect(result.stdout == "svc\n")
            let keyFile = options.contains("k") ? "k" : "d/keys.json"
            #expect(FileManager.default.fileExists(atPath: dir.path + "/" + keyFile))
        }
    }

    /// strace, which these tests watch and steer the command line with.
    private func strace() throws -> String {
        let path = "/usr/bin/strace"
        try #require(
            FileManager.default.isExecutableFile(atPath: path), "strace is installed by scripts/bootstrap --test")
        return path
    }

    /// The system calls that write and move files, one line each, of `strata arguments`.
    private func systemCalls(of arguments: [String], in dir: URL) throws -> [String] {
        let trace = dir.path + "/trace"
        let result = try ChildProcess.run(
            URL(fileURLWithPath: try strace()),
            ["-f", "-qq", "-o", trace, "-e", "trace=openat,fsync,rename,renameat,renameat2,link,linkat",
             ChildProcess.product("strata").path] + arguments)
        #expect(result.exitCode == 0, "strace strata \(arguments): \(result.stderr)")
        return try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map(String.init)
    }
}

extension [String] {
    /// Whether these calls open `directory` itself and then `fsync` that descriptor successfully.
    fileprivate func syncs(directory: String) -> Bool {
        for (index, call) in enumerated()
        where call.contains("openat(AT_FDCWD, \"\(directory)\", ") && call.contains("O_DIRECTORY") {
            guard let fd = call.split(separator: "= ").last.flatMap({ Int($0) }), fd >= 0 else { continue }
            if self[(index + 1)...].contains(where: { $0.contains("fsync(\(fd))") && $0.hasSuffix("= 0") }) {
                return true
            }
        }
        return false
    }
}
