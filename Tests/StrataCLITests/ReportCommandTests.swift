import Foundation
import Projections
import StrataTesting
import Synchronization
import Testing

@testable import StrataCLI

/// `strata report` as a user runs it: the real binary on a data directory.
@Suite struct ReportCommandTests {
    @Test func writesTheReportIntoAFileWhole() throws {
        let book = try ReportFixtures.book()
        try withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("report.html").path
            let result = try strata(
                ["report", "--html", file, "--data", book.directory.path, "--date", "2026-03-31"], expecting: 0)
            #expect(result.stdout == "wrote \(file): readmodels at position 28, as of 2026-03-31\n")
            let html = try String(contentsOfFile: file, encoding: .utf8)
            #expect(html.hasPrefix("<!DOCTYPE html>"))
            #expect(html.hasSuffix("</html>\n"))
            #expect(html.contains("read models at position <strong>28</strong>"))
            #expect(html.contains("<td class=\"num\">16,161.44</td><td class=\"num\">26,971.89</td></tr>"))
            // Only the report is left: the temporary file was renamed over it.
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["report.html"])
            // Written again over the old one.
            try strata(["report", "--html", file, "--data", book.directory.path, "--date", "2026-03-15"], expecting: 0)
            #expect(try String(contentsOfFile: file, encoding: .utf8).contains("As of <strong>2026-03-15</strong>"))
        }
    }

    /// The report names invoice customers (personal data in clear): it is readable by its owner only,
    /// whatever the umask, also when it replaces a file others could read.
    @Test func theReportIsReadableByItsOwnerOnly() throws {
        let book = try ReportFixtures.book()
        try withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("report.html").path
            func mode() throws -> Int {
                try #require(FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
            }
            try strata(["report", "--html", file, "--data", book.directory.path], expecting: 0)
            #expect(try mode() == 0o600)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
            try strata(["report", "--html", file, "--data", book.directory.path], expecting: 0)
            #expect(try mode() == 0o600)
        }
    }

    /// A FILE that is one of the system's files or the data directory, by whatever name or link,
    /// is refused before anything is read or written, as `rebuild --output` refuses it.
    @Test(arguments: [
        "events.db", "events.db-wal", "readmodels.db", "readmodels.db-shm", "audit.db", "audit.db-lock",
        "subject-keys.db", "subject-keys.db-wal", "keys.json", "keys.json.lock", "checkpoint.key", "checkpoint.pub",
        "./events.db", "../DATA/readmodels.db", "events-link.db", "audit-hard-link.db", "not-yet-link.db", ".", "",
        // The config file every command reads once it is there, also while it is not.
        "strata.json", "config-link.json",
    ])
    func aFileThatIsOneOfTheSystemsFilesIsRefused(_ name: String) throws {
        let book = try ReportFixtures.book()
        let data = book.directory.path
        let dataName = book.directory.lastPathComponent
        for file in ["events.db", "events.db-wal", "audit.db", "audit.db-lock", "checkpoint.key", "checkpoint.pub"] {
            try writePrivate(Array("the system's \(file)".utf8), to: data + "/" + file)
        }
        try writePrivate(Array(#"{"keys":[]}"#.utf8), to: data + "/keys.json")
        try FileManager.default.createSymbolicLink(atPath: data + "/events-link.db", withDestinationPath: "events.db")
        try FileManager.default.linkItem(atPath: data + "/audit.db", toPath: data + "/audit-hard-link.db")
        // A link to a system file not made yet: writing through it would make that file.
        try FileManager.default.createSymbolicLink(
            atPath: data + "/not-yet-link.db", withDestinationPath: "subject-keys.db")
        try FileManager.default.createSymbolicLink(
            atPath: data + "/config-link.json", withDestinationPath: "strata.json")
        let before = try contents(of: data)

        let output = data + "/" + name.replacingOccurrences(of: "DATA", with: dataName)
        let result = try strata(["report", "--html", output, "--data", data], expecting: 2)
        #expect(result.stderr.hasPrefix("strata report: \(output) is "), "\(result.stderr)")
        #expect(result.stderr.hasSuffix(", which a report must not replace\n"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(try contents(of: data) == before)
        #expect(!FileManager.default.fileExists(atPath: data + "/subject-keys.db"))
        #expect(!FileManager.default.fileExists(atPath: data + "/strata.json"))
    }

    /// Every entry of `directory`: a regular file's bytes, a link's target, or its kind.
    private func contents(of directory: String) throws -> [String: String] {
        var entries: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            var info = stat()
            let path = directory + "/" + name
            guard lstat(path, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFREG: entries[name] = try Data(contentsOf: URL(fileURLWithPath: path)).base64EncodedString()
            case S_IFLNK: entries[name] = "link to " + (try FileManager.default.destinationOfSymbolicLink(atPath: path))
            default: entries[name] = "mode \(info.st_mode)"
            }
        }
        return entries
    }

    /// A FIFO (as `--html >(gzip > r.gz)` makes) or a device is written into, as the shell's
    /// `>` would, not replaced by a plain file; a directory is refused.
    @Test func aPathThatIsNotAFileIsWrittenIntoNotReplaced() throws {
        let book = try ReportFixtures.book()
        try withTemporaryDirectory { dir in
            let fifo = dir.appendingPathComponent("report.fifo").path
            try #require(mkfifo(fifo, 0o600) == 0)
            // The reader runs while the report is written: opening a FIFO to write waits for one.
            let received = Mutex(Data())
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                // read(2) to the end: FileManager reads as many bytes as stat reports, none for a FIFO.
                let fd = open(fifo, O_RDONLY)
                var data = Data()
                var buffer = [UInt8](repeating: 0, count: 64 * 1024)
                while fd >= 0 {
                    let count = read(fd, &buffer, buffer.count)
                    if count <= 0 { break }
                    data.append(contentsOf: buffer[..<count])
                }
                if fd >= 0 { close(fd) }
                received.withLock { $0 = data }
                done.signal()
            }
            let result = try strata(["report", "--html", fifo, "--data", book.directory.path], expecting: 0)
            #expect(result.stdout.hasPrefix("wrote \(fifo): "))
            try #require(done.wait(timeout: .now() + 30) == .success, "the reader got the report")
            let html = String(decoding: received.withLock { $0 }, as: UTF8.self)
            #expect(html.hasPrefix("<!DOCTYPE html>") && html.hasSuffix("</html>\n"))
            var status = stat()
            #expect(stat(fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO, "still a FIFO")
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["report.fifo"])

            let refused = try strata(["report", "--html", dir.path, "--data", book.directory.path], expecting: 2)
            #expect(refused.stderr == "strata report: cannot write \(dir.path): Is a directory\n")
        }
    }

    @Test func aDashWritesToStandardOutput() throws {
        let book = try ReportFixtures.book()
        let result = try strata(["report", "--html", "-", "--data", book.directory.path], expecting: 0)
        #expect(result.stdout.hasPrefix("<!DOCTYPE html>\n"))
        #expect(result.stdout.contains("<th scope=\"row\">Active</th><td class=\"num\">3</td>"))
        #expect(result.stderr.isEmpty)
    }

    /// Read models that are no view of the events.db beside them (ahead of its head: the store
    /// restored from an older backup) still make a page, flagged at its top and on standard error
    /// as `strata query` warns: its figures are not this store's history.
    @Test func readModelsThatAreNotTheStoresAreFlagged() throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        let data = history.data.path
        let matching = try strata(["report", "--html", "-", "--data", data], expecting: 0)
        #expect(!matching.stdout.contains("class=\"warning\"") && matching.stderr.isEmpty, "\(matching.stderr)")

        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: data + "/events.db" + suffix) }
        try bootstrapAdminBesideProjections(data: data)
        let ahead = try strata(["report", "--html", "-", "--data", data], expecting: 0)
        let message =
            "readmodels is ahead of the store: checkpoint \(history.head) is beyond the store's head, position 1: "
            + "events.db is older than this file (restored from a backup?); rebuild it from the store"
        #expect(
            ahead.stdout.contains(
                "<p class=\"warning\" role=\"alert\">The read models are not this store&#39;s history: "
                    + "\(message.htmlEscaped).</p>"), "\(ahead.stdout)")
        #expect(ahead.stderr == "strata report: warning: \(message); the report is not this store's history\n")
    }

    @Test func noReadModelsIsAnEnvironmentError() throws {
        try withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("report.html").path
            let result = try strata(["report", "--html", file, "--data", dir.path], expecting: 2)
            #expect(
                result.stderr
                    == "strata report: no read models at \(dir.path)/readmodels.db: run `strata project readmodels` "
                    + "(or `strata up`) first\n")
            #expect(!FileManager.default.fileExists(atPath: file))

            // A file that is not a projection at all.
            try Data("not a database".utf8).write(to: dir.appendingPathComponent("readmodels.db"))
            let garbage = try strata(["report", "--html", file, "--data", dir.path], expecting: 2)
            #expect(garbage.stderr.hasPrefix("strata report: "), "\(garbage.stderr)")
            #expect(garbage.stderr.contains("readmodels.db"), "\(garbage.stderr)")
            #expect(!FileManager.default.fileExists(atPath: file))
        }
    }

    @Test func usageErrors() throws {
        let book = try ReportFixtures.book()
        let data = ["--data", book.directory.path]
        let missing = try strata(["report"] + data, expecting: 2)
        #expect(missing.stderr == "strata report: say where to write the report: --html FILE (- for standard output)\n")
        let date = try strata(["report", "--html", "-", "--date", "2026-02-30"] + data, expecting: 2)
        #expect(date.stderr == "strata report: --date must be a date YYYY-MM-DD\n")
        let positional = try strata(["report", "out.html"] + data, expecting: 2)
        #expect(positional.stderr == "strata report: unexpected argument 'out.html' for strata report\n")
        // The path given is named, not the temporary file written beside it.
        let nowhere = try strata(["report", "--html", "/nonexistent-dir/report.html"] + data, expecting: 2)
        #expect(
            nowhere.stderr == "strata report: cannot write /nonexistent-dir/report.html: No such file or directory\n")
        let help = try strata(["report", "--help"], expecting: 0)
        #expect(help.stdout.contains("--html FILE"))
    }
}
