import Events
import Foundation
import ProjectorRuntime
import Projections
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

/// `strata project` refusing, before it does anything, what it could never do: endpoints that
/// are not endpoints, a projection file it cannot open, a metrics file it cannot write. None of
/// this needs a service: the endpoints given are free loopback ports nothing answers on.
@Suite("strata project: refusals before it starts")
struct ProjectCommandTests {
    /// A data directory with a key for history; the arguments that point a projector at it.
    static func dataDirectory(_ directory: URL) throws -> [String] {
        try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", directory.path], expecting: 0)
        return ["--data", directory.path, "--key", "svc"]
    }

    static func freeEndpoints() throws -> [String: String] {
        [
            "--events": "tcp://127.0.0.1:\(try freeLoopbackPort())",
            "--history": "tcp://127.0.0.1:\(try freeLoopbackPort())",
        ]
    }

    /// Runs `strata project NAME …` until it exits (nil if it still runs after `timeout`, when it
    /// is killed) and returns its exit code and log.
    static func project(_ arguments: [String], timeout: TimeInterval = 30) throws -> (exit: Int32?, log: String) {
        let process = try StrataProcess(["project"] + arguments)
        let exit = process.waitForExit(timeout: timeout)
        return (exit, process.log)
    }

    /// A port beyond 65535 was taken modulo 65536 by libzmq, and port 0 waited for: the projector
    /// ran, asking history at another port than named, or nothing at all, for ever.
    @Test(arguments: [
        ("--history", "bar"), ("--events", "foo"), ("--events", "nosuch://127.0.0.1:1"),
        ("--history", "tcp://127.0.0.1:99999"), ("--events", "tcp://127.0.0.1:0"),
    ])
    func aMalformedEndpointIsAUsageError(option: String, endpoint: String) throws {
        try withTemporaryDirectory { directory in
            var endpoints = try Self.freeEndpoints()
            endpoints[option] = endpoint
            let (exit, log) = try Self.project(
                ["readmodels"] + Self.dataDirectory(directory) + endpoints.flatMap { [$0.key, $0.value] })
            #expect(exit == 2, "\(log)")
            #expect(log.contains(endpoint), "\(log)")
            #expect(!log.contains(" ready "), "\(log)")
        }
    }

    /// A directory, a file of garbage, an SQLite file of something else where the projection
    /// file should be: the environment is wrong (exit 2), not a problem found in the events.
    @Test(arguments: ["directory", "garbage", "other SQLite file"])
    func aProjectionFileThatCannotBeOpenedIsAnEnvironmentError(what: String) throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("readmodels.db").path
            switch what {
            case "directory":
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            case "garbage":
                try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path))
            default:
                let other = try SQLiteConnection(path: path, mode: .readWrite)
                try other.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY)")
            }
            let endpoints = try Self.freeEndpoints()
            let (exit, log) = try Self.project(
                ["readmodels"] + Self.dataDirectory(directory) + endpoints.flatMap { [$0.key, $0.value] })
            #expect(exit == 2, "\(log)")
            #expect(log.contains(path), "\(log)")
        }
    }

    /// --skip and --resume change the file for good: whatever else is wrong with the command line
    /// or its surroundings (a metrics file that cannot be written, an endpoint that is none) is
    /// found first, and the stop stays as it was.
    @Test func theOperatorsActWaitsUntilEverythingElseIsChecked() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("readmodels.db").path
            try Self.stopAtPositionOne(path)
            let data = try Self.dataDirectory(directory)
            let endpoints = try Self.freeEndpoints()
            let unwritable = ["--metrics-file", directory.appendingPathComponent("missing/readmodels.prom").path]
            for act in [["--skip", "1", "--reason", "a test"], ["--resume"]] {
                for (wrong, expected) in [
                    (unwritable + endpoints.flatMap { [$0.key, $0.value] }, "--metrics-file"),
                    (["--events", "foo", "--history", endpoints["--history"]!], "foo"),
                ] {
                    let (exit, log) = try Self.project(["readmodels"] + data + act + wrong)
                    #expect(exit == 2, "\(act) \(wrong): \(log)")
                    #expect(log.contains(expected), "\(log)")
                    let snapshot = try #require(try ProjectionSnapshot(path: path))
                    #expect(snapshot.stop?.position == 1, "\(act) \(wrong): the stop was cleared")
                    #expect(try snapshot.skips().isEmpty, "\(act) \(wrong): the skip was recorded")
                }
            }
            let (exit, log) = try Self.project(
                ["readmodels"] + data + ["--resume", "--reason", "fixed"] + endpoints.flatMap { [$0.key, $0.value] })
            #expect(exit == 2 && log.contains("--reason goes with --skip"), "\(log)")
        }
    }

    /// A fix of a projection often changes its statements: the file, made from another schema, is
    /// made again from position 0 as the projector starts, and the stop goes with it. --resume then
    /// has every event tried again, and --skip records the skip in the new file; both were refused
    /// as "not stopped" (exit 1) once the file had been made again, the skip not recorded.
    @Test(arguments: [["--resume"], ["--skip", "1", "--reason", "fixed elsewhere"]])
    func anActOnAFileOfAnotherSchemaIsDoneOnTheFileMadeAgain(act: [String]) throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("readmodels.db").path
            try Self.stopAtPositionOne(path)
            do {
                let file = try SQLiteConnection(path: path, mode: .readWrite)
                try file.execute("UPDATE strata_checkpoint SET fingerprint = 'another schema'")
            }
            let endpoints = try Self.freeEndpoints()
            let arguments = try Self.dataDirectory(directory) + act + endpoints.flatMap { [$0.key, $0.value] }
            let projector = try StrataProcess(["project", "readmodels"] + arguments)
            try projector.waitForLine(containing: " ready ")
            projector.send(signal: SIGTERM)
            #expect(projector.waitForExit(timeout: 20) == 0, "\(projector.log)")
            #expect(projector.log.contains("made from another schema"), "\(projector.log)")
            let snapshot = try #require(try ProjectionSnapshot(path: path))
            #expect(snapshot.stop == nil && snapshot.checkpoint == 0)
            #expect(try snapshot.skips().map(\.position) == (act.first == "--skip" ? [1] : []))
        }
    }

    /// A readmodels file stopped at position 1, at a poison event (an agent approved who never
    /// registered), which --skip may pass over.
    static func stopAtPositionOne(_ path: String) throws {
        let history = try ProjectionHarness([])
        let event = try history.record(
            .agentApproved(
                AgentApproved(
                    agentId: "agent-9", approvedBy: "admin-1", approvedAt: Timestamp("2026-01-02T09:00:00.000Z")!)),
            stream: "user-agent-9")
        let database = try ProjectionDatabase(path: path, name: "readmodels", projections: ReadModels.all)
        try database.apply([event])
        try #require(database.stop?.position == 1 && database.stop?.kind == .poison)
    }
}
