import Foundation
import StrataSQLite
import StrataTesting
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The read commands on a data directory they may read but not write: a stopped system's files
/// on read-only media, or in a directory an auditor's account may only read. SQLite reads a file
/// in WAL mode through an index it keeps beside it (`events.db-shm`), which it cannot make there.
@Suite("read commands on a read-only data directory")
struct ReadOnlyDataDirectoryTests {
    /// Runs strata as a user who cannot write the data directory: nobody, when the tests run as
    /// root, since root may write a directory whatever its mode.
    private func strataAsReader(
        _ arguments: [String], expecting exitCode: Int32, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ChildProcess.Result {
        let result =
            geteuid() == 0
            ? try ChildProcess.run(
                URL(fileURLWithPath: "/usr/bin/setpriv"),
                ["--reuid=65534", "--regid=65534", "--clear-groups", ChildProcess.product("strata").path] + arguments)
            : try ChildProcess.strata(arguments)
        let said = "strata \(arguments.joined(separator: " ")) exited \(result.exitCode)\nstdout: \(result.stdout)"
        #expect(result.exitCode == exitCode, "\(said)\nstderr: \(result.stderr)", sourceLocation: sourceLocation)
        return result
    }

    @Test func everyReadCommandAnswersFromAStoppedSystemsFiles() throws {
        let history = try KnownHistory.make()
        let output = try ChildProcess.temporaryDirectory("strata-read-only-output")
        defer {
            chmod(history.data.path, 0o755)
            history.remove()
            try? FileManager.default.removeItem(at: output)
        }
        let data = history.data.path
        for name in ["events", "readmodels", "audit"] {
            // A stopped system's files: neither a WAL nor its index beside them.
            for suffix in ["-wal", "-shm"] {
                try #require(!FileManager.default.fileExists(atPath: "\(data)/\(name).db\(suffix)"))
            }
            // Readable by all, as a projector leaves its file (the rebuilds here made them 0600).
            try #require(chmod("\(data)/\(name).db", 0o644) == 0)
        }
        try #require(chmod(data, 0o555) == 0 && chmod(output.path, 0o777) == 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: data).sorted()

        let verify = try strataAsReader(["verify", "--data", data], expecting: 0)
        #expect(verify.stdout.hasPrefix("intact: \(history.head) events verified; head \(history.head)"))
        let status = try strataAsReader(["status", "--format", "json", "--data", data], expecting: 0)
        #expect(
            status.stdout == #"{"errors":{},"head":19,"projections":{"audit":19,"readmodels":19},"#
                + #""running":{"audit":null,"readmodels":null,"serve":null}}"# + "\n")
        let replay = try strataAsReader(["replay", "--to", "2", "--data", data], expecting: 0)
        #expect(replay.stdout.split(separator: "\n").count == 2)
        let accounts = try strataAsReader(["query", "accounts", "--format", "json", "--data", data], expecting: 0)
        #expect(try jsonLine(accounts.stdout)["rows"]?.arrayValue?.count == 3)
        let refusals = try strataAsReader(["query", "refusals", "--format", "json", "--data", data], expecting: 0)
        #expect(try jsonLine(refusals.stdout)["rows"]?.arrayValue?.count == 4)
        let asOf = try strataAsReader(
            ["query", "audit", "--as-of", "5", "--format", "json", "--data", data], expecting: 0)
        #expect(try jsonLine(asOf.stdout)["rows"]?.arrayValue?.count == 5)
        let report = try strataAsReader(["report", "--html", "-", "--data", data], expecting: 0)
        #expect(report.stdout.hasPrefix("<!DOCTYPE html>"))
        let rebuild = try strataAsReader(
            ["rebuild", "audit", "--compare", "--output", output.path + "/audit.db", "--data", data], expecting: 0)
        #expect(rebuild.stdout.contains("equal: the live audit at position \(history.head) matches the rebuild"))
        // Read as they are, the files are left as they were: nothing was made beside them.
        #expect(try FileManager.default.contentsOfDirectory(atPath: data).sorted() == files)
    }

    /// A `-wal` left beside the file (a system that did not stop cleanly, copied as it was) holds
    /// commits that only the index can read, which cannot be made there: an environment error
    /// that says so, where SQLite's own said `No such file or directory` of a file that is there.
    @Test func aWALLeftBesideTheFileIsNamed() throws {
        try withTemporaryDirectory { dir in
            let live = dir.appendingPathComponent("live").path
            let copy = dir.appendingPathComponent("copy").path
            for path in [live, copy] {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            }
            defer { chmod(copy, 0o755) }
            try bootstrapAdmin(data: live)
            // A commit kept in the WAL by a connection still open, copied as it stands.
            let writer = try SQLiteConnection(path: live + "/events.db", mode: .readWrite)
            try writer.execute("PRAGMA wal_autocheckpoint=0")
            try writer.execute("CREATE TABLE uncheckpointed (x)")
            for file in ["/events.db", "/events.db-wal"] {
                try FileManager.default.copyItem(atPath: live + file, toPath: copy + file)
                try #require(chmod(copy + file, 0o644) == 0)
            }
            writer.close()
            try #require(chmod(copy, 0o555) == 0)
            let verify = try strataAsReader(["verify", "--data", copy], expecting: 2)
            #expect(
                verify.stderr.contains(
                    "cannot make \(copy)/events.db-shm, the index SQLite reads \(copy)/events.db-wal through, in "
                        + "a directory that cannot be written, and \(copy)/events.db-wal holds commits the file "
                        + "does not"),
                "\(verify.stderr)")
        }
    }
}
