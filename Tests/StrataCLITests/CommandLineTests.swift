import CommandService
import Domain
import EventStore
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

@testable import StrataCLI

// Black-box tests of the real `strata` binary: exit codes (0 ok, 1 the operation found a
// problem, 2 usage or environment), what it prints, and the files it leaves.

/// Runs `strata` and records its output when the exit code is not the expected one.
@discardableResult
func strata(
    _ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil, expecting exitCode: Int32,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> ChildProcess.Result {
    let result = try ChildProcess.strata(arguments, in: directory, environment: environment)
    #expect(
        result.exitCode == exitCode,
        "strata \(arguments.joined(separator: " ")) exited \(result.exitCode)\nstdout: \(result.stdout)\nstderr: \(result.stderr)",
        sourceLocation: sourceLocation)
    return result
}

/// A fresh temporary directory, removed when `body` returns.
func withTemporaryDirectory<T>(_ body: (URL) throws -> T) throws -> T {
    let dir = try ChildProcess.temporaryDirectory("strata-cli")
    defer { try? FileManager.default.removeItem(at: dir) }
    return try body(dir)
}

/// Writes a file only its owner may read, as a key file must be (`PrivateFile`).
func writePrivate(_ bytes: [UInt8], to path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    try #require(
        FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]),
        sourceLocation: sourceLocation)
    // createFile keeps an existing file's mode.
    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
}

/// The permission bits of a file.
func permissions(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    let mode = try #require(attributes[.posixPermissions] as? NSNumber, sourceLocation: sourceLocation)
    return mode.intValue & 0o777
}

/// Reads and parses a key file.
func readKeyFile(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> KeyFile {
    let bytes = try #require(FileManager.default.contents(atPath: path), "no key file at \(path)", sourceLocation: sourceLocation)
    return try KeyFile(json: bytes)
}

/// Parses one line of JSON output.
func jsonLine(_ line: some StringProtocol) throws -> JSONValue {
    try JSONParser.parse(Array(line.utf8))
}

/// Registers the first admin in the store under `data`.
func bootstrapAdmin(
    data: String, id: String = "admin-1", username: String = "root", email: String = "root@example.com",
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let result = try strata(
        ["admin", "bootstrap", "--data", data, "--id", id, "--username", username, "--email", email], expecting: 0,
        sourceLocation: sourceLocation)
    #expect(result.stdout.contains("registered admin \(id) (\(username)) at position 1"), sourceLocation: sourceLocation)
}

/// Bootstraps a new store in `data` beside the projections of an earlier one, as a store copied
/// in from elsewhere (an older backup, another deployment) would stand: with the projection files
/// moved aside meanwhile, since bootstrap begins no history under projections that applied one.
func bootstrapAdminBesideProjections(data: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let files = ["readmodels.db", "audit.db"].flatMap { name in ["", "-wal", "-shm"].map { data + "/" + name + $0 } }
        .filter { FileManager.default.fileExists(atPath: $0) }
    for file in files { try FileManager.default.moveItem(atPath: file, toPath: file + ".aside") }
    defer { for file in files { try? FileManager.default.moveItem(atPath: file + ".aside", toPath: file) } }
    try bootstrapAdmin(data: data, sourceLocation: sourceLocation)
}

private func isLowercaseHex(_ text: some StringProtocol, count: Int) -> Bool {
    text.utf8.count == count && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
}

@Suite("strata: overview, help, unknown commands")
struct CommandLineOverviewTests {
    @Test func noArgumentsIsAUsageError() throws {
        let result = try strata([], expecting: 2)
        #expect(result.stderr.contains("Usage: strata COMMAND"))
        #expect(result.stdout.isEmpty)
    }

    @Test(arguments: [["--help"], ["-h"], ["help"]])
    func helpExitsZeroAndListsEveryCommand(_ arguments: [String]) throws {
        let result = try strata(arguments, expecting: 0)
        #expect(result.stdout.contains("Usage: strata COMMAND"))
        for command in StrataCommandLine.subcommands {
            #expect(result.stdout.contains(command.spec.words.joined(separator: " ")), "\(command.spec.words)")
        }
        #expect(result.stdout.contains("Exit codes: 0 ok, 1 the operation found a problem, 2 usage or environment error."))
    }

    /// The commands this suite was written against are all there.
    @Test func knownSubcommandsExist() {
        let words = Set(StrataCommandLine.subcommands.map { $0.spec.words.joined(separator: " ") })
        #expect(words.isSuperset(of: ["verify", "keys new", "admin bootstrap", "bench"]))
    }

    @Test(arguments: StrataCommandLine.subcommands.map(\.spec.words))
    func everySubcommandHasHelp(_ words: [String]) throws {
        let spec = try #require(StrataCommandLine.subcommands.first { $0.spec.words == words }?.spec)
        for flag in ["--help", "-h"] {
            let result = try strata(words + [flag], expecting: 0)
            #expect(result.stdout.contains("Usage: strata " + words.joined(separator: " ")))
            for option in spec.options {
                #expect(result.stdout.contains("--" + option.name), "\(words) --help does not mention --\(option.name)")
            }
            // A `\n` written into the text prints a line break (and `\r` a carriage return) where
            // the help means to show the escape, cutting its sentence across lines.
            let controls = result.stdout.unicodeScalars.filter { $0 != "\n" && ($0.value < 0x20 || $0.value == 0x7F) }
            #expect(controls.isEmpty, "\(words) --help prints control characters \(controls.map(\.value))")
            #expect(result.stderr.isEmpty)
        }
    }

    /// A command that stops gracefully on the shutdown signals says so for each of them: serve's
    /// and project's help named SIGINT and SIGTERM only, where SIGHUP (a closed terminal) stops
    /// them the same way.
    @Test(arguments: StrataCommandLine.subcommands.filter(\.stopsOnSignals).map(\.spec.words))
    func theHelpOfACommandThatStopsOnSignalsNamesEachOfThem(_ words: [String]) throws {
        let help = try strata(words + ["--help"], expecting: 0).stdout.split(whereSeparator: \.isWhitespace)
            .joined(separator: " ")
        #expect(help.contains("SIGINT, SIGTERM or SIGHUP"), "\(words) --help: \(help)")
        #expect(help.contains("SIGHUP ignored"), "\(words) --help: \(help)")
    }

    /// The exit codes of a command that takes --metrics-file name the one it gives a path that is not
    /// a regular file (refused at start, as writing into a FIFO waits for a reader), not only one
    /// that cannot be written.
    @Test(arguments: [["serve"], ["project"]])
    func theHelpOfACommandWithAMetricsFileNamesWhatIsNotARegularFile(_ words: [String]) throws {
        let help = try strata(words + ["--help"], expecting: 0).stdout.split(whereSeparator: \.isWhitespace)
            .joined(separator: " ")
        let refused = "a metrics file that cannot be written, is not a regular file (a FIFO, a directory, a device)"
        #expect(help.contains(refused), "\(words) --help: \(help)")
    }

    @Test func unknownCommand() throws {
        let result = try strata(["frobnicate"], expecting: 2)
        #expect(result.stderr.contains("unknown command 'frobnicate'"))
        try strata(["Verify"], expecting: 2)
        try strata(["--verbose"], expecting: 2)
    }

    @Test func incompleteCommandNamesItsSubcommands() throws {
        let result = try strata(["keys"], expecting: 2)
        #expect(result.stderr.contains("keys new"))
        try strata(["keys", "old", "x"], expecting: 2)
        try strata(["admin"], expecting: 2)
    }

    @Test func unknownOptionIsAUsageError() throws {
        let result = try strata(["verify", "--nope"], expecting: 2)
        #expect(result.stderr.contains("unknown option '--nope'"))
    }
}

@Suite("strata keys new")
struct KeysNewTests {
    @Test func createsAPrivateKeyFileAndPrintsTheId() throws {
        try withTemporaryDirectory { dir in
            // The data directory does not exist yet: it is created.
            let data = dir.path + "/nested/data"
            let result = try strata(["keys", "new", "svc-mobile", "--scope", "commands,history", "--data", data], expecting: 0)
            // CONTRACT.md: it prints the id (and nothing else: the secret stays in the file).
            #expect(result.stdout == "svc-mobile\n")
            let path = data + "/keys.json"
            #expect(try permissions(path) == 0o600)

            let text = try String(contentsOfFile: path, encoding: .utf8)
            let json = try JSONParser.parse(Array(text.utf8))
            let entry = try #require(json["keys"]?.arrayValue?.first)
            let secret = try #require(entry["secret"]?.stringValue)
            #expect(isLowercaseHex(secret, count: 64))
            #expect(text.hasSuffix("}\n"))

            let key = try #require(try readKeyFile(path).key("svc-mobile"))
            #expect(key.scopes == [.commands, .history])
            #expect(key.roles == nil)
            #expect(key.secret.count == 32)
            #expect(Hex.encode(key.secret) == secret)
            #expect(key.secret != Array(repeating: 0, count: 32))
        }
    }

    @Test func addsToAnExistingFileAndRecordsRoles() throws {
        try withTemporaryDirectory { dir in
            let env = ["STRATA_DATA": dir.path]
            try strata(["keys", "new", "first", "--scope", "commands"], environment: env, expecting: 0)
            let path = dir.path + "/keys.json"
            let before = try readKeyFile(path)
            let result = try strata(
                ["keys", "new", "agents", "--scope", "commands, personal-data", "--roles", "AGENT"], environment: env, expecting: 0)
            #expect(result.stdout == "agents\n")
            let after = try readKeyFile(path)
            #expect(after.keys.map(\.id) == ["first", "agents"])
            #expect(after.key("first") == before.key("first"))
            let agents = try #require(after.key("agents"))
            #expect(agents.roles == ["AGENT"])
            #expect(agents.scopes == [.commands, .personalData])
            #expect(agents.secret != after.key("first")?.secret)
            #expect(try permissions(path) == 0o600)
        }
    }

    @Test func sameIdTwiceIsRefusedAndTheFileIsUntouched() throws {
        try withTemporaryDirectory { dir in
            try strata(["keys", "new", "svc", "--scope", "history", "--data", dir.path], expecting: 0)
            let path = dir.path + "/keys.json"
            let before = FileManager.default.contents(atPath: path)
            let result = try strata(["keys", "new", "svc", "--scope", "commands", "--data", dir.path], expecting: 1)
            #expect(result.stderr.contains("a key named svc exists already"))
            #expect(result.stdout.isEmpty)
            #expect(FileManager.default.contents(atPath: path) == before)
        }
    }

    @Test(arguments: [
        (["--scope", "commands,admin"], "unknown scope 'admin'"), (["--scope", "Commands"], "unknown scope 'Commands'"),
        ([], "--scope is required"), (["--scope", ""], "--scope needs a non-empty value"), (["--scope", " , "], "--scope is required"),
        (["--scope"], "--scope needs a value"), (["--scope", "history", "--roles", "BOSS"], "--roles takes ADMIN and/or AGENT"),
        (["--scope", "history", "--roles", ""], "--roles needs a non-empty value"), (["--scope", "history", "--roles", " , "], "--roles takes ADMIN and/or AGENT"),
    ] as [([String], String)])
    func usageErrorsExitTwoAndWriteNothing(_ options: [String], _ message: String) throws {
        try withTemporaryDirectory { dir in
            let result = try strata(["keys", "new", "svc"] + options + ["--data", dir.path], expecting: 2)
            #expect(result.stderr.contains(message), "stderr: \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/keys.json"))
        }
    }

    @Test func badIdsAreUsageErrors() throws {
        try withTemporaryDirectory { dir in
            try strata(["keys", "new", "bad id", "--scope", "history", "--data", dir.path], expecting: 2)
            try strata(["keys", "new", String(repeating: "k", count: 65), "--scope", "history", "--data", dir.path], expecting: 2)
            try strata(["keys", "new", "--scope", "history", "--data", dir.path], expecting: 2)
            try strata(["keys", "new", "a", "b", "--scope", "history", "--data", dir.path], expecting: 2)
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/keys.json"))
        }
    }

    @Test func keysFileOptionAndVariable() throws {
        try withTemporaryDirectory { dir in
            let viaFlag = dir.path + "/etc/flag-keys.json"
            try strata(["keys", "new", "a", "--scope", "history", "--data", dir.path, "--keys", viaFlag], expecting: 0)
            #expect(try readKeyFile(viaFlag).key("a") != nil)
            #expect(try permissions(viaFlag) == 0o600)
            let viaEnv = dir.path + "/env-keys.json"
            try strata(
                ["keys", "new", "b", "--scope", "history", "--data", dir.path], environment: ["STRATA_KEYS": viaEnv], expecting: 0)
            #expect(try readKeyFile(viaEnv).key("b") != nil)
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/keys.json"))
        }
    }

    @Test func malformedExistingKeyFileIsAnEnvironmentError() throws {
        try withTemporaryDirectory { dir in
            let path = dir.path + "/keys.json"
            try writeText(#"{"keys":[{"id":"x"}]}"#, to: path)
            let result = try strata(["keys", "new", "svc", "--scope", "history", "--data", dir.path], expecting: 2)
            #expect(result.stderr.contains("secret"))
            #expect(try String(contentsOfFile: path, encoding: .utf8) == #"{"keys":[{"id":"x"}]}"#)
        }
    }
}

@Suite("strata admin bootstrap")
struct AdminBootstrapTests {
    @Test func bootstrapThenVerify() throws {
        try withTemporaryDirectory { dir in
            try bootstrapAdmin(data: dir.path)

            let verify = try strata(["verify", "--data", dir.path], expecting: 0)
            #expect(verify.stdout.contains("intact: 1 events verified"))

            let json = try strata(["verify", "--format", "json"], environment: ["STRATA_DATA": dir.path], expecting: 0)
            let report = try jsonLine(json.stdout.trimmingCharacters(in: .newlines))
            #expect(report["intact"] == true)
            #expect(report["eventsVerified"] == 1)
            #expect(report["lastGoodPosition"] == 1)
            #expect(report["lastGoodHash"]?.stringValue.map { isLowercaseHex($0, count: 64) } == true)
            #expect(report["problem"] == JSONValue?.none)

            // What was stored: one UserRegistered for an approved ADMIN, as an operator act.
            let c = try SQLiteConnection(path: dir.path + "/events.db", mode: .readOnly)
            #expect(try c.scalarInteger("SELECT count(*) FROM events") == 1)
            #expect(try c.scalarText("SELECT stream FROM events WHERE position = 1") == "user-admin-1")
            #expect(try c.scalarText("SELECT type FROM events WHERE position = 1") == "UserRegistered")
            let data = try JSONParser.parse(Array(try #require(try c.scalarText("SELECT data FROM events WHERE position = 1")).utf8))
            #expect(data["username"] == "root")
            #expect(data["role"] == "ADMIN")
            #expect(data["status"] == "APPROVED")
            let metadata = try JSONParser.parse(
                Array(try #require(try c.scalarText("SELECT metadata FROM events WHERE position = 1")).utf8))
            #expect(metadata["commandId"] == "operator-bootstrap-admin-1")
            #expect(metadata["actor"] == "operator")
        }
    }

    @Test func secondBootstrapIsRefused() throws {
        try withTemporaryDirectory { dir in
            try bootstrapAdmin(data: dir.path)
            let second = try strata(
                ["admin", "bootstrap", "--data", dir.path, "--id", "admin-2", "--username", "other", "--email", "o@example.com"],
                expecting: 1)
            #expect(second.stderr.contains("an admin exists already"))
            // The same admin again is refused too.
            try strata(
                ["admin", "bootstrap", "--data", dir.path, "--id", "admin-1", "--username", "root", "--email", "root@example.com"],
                expecting: 1)
            let verify = try strata(["verify", "--data", dir.path], expecting: 0)
            #expect(verify.stdout.contains("intact: 1 events verified"))
        }
    }

    /// Options left out are named: the message listed all three whichever was missing.
    @Test func theMissingOptionsAreNamed() throws {
        try withTemporaryDirectory { dir in
            let result = try strata(["admin", "bootstrap", "--data", dir.path, "--username", "root"], expecting: 2)
            #expect(
                result.stderr
                    == "strata admin bootstrap: missing --id, --email "
                    + "(--id, --username and --email are all required)\n")
        }
    }

    @Test(arguments: [
        ["--id", "a1", "--username", "root", "--email", "not-an-email"], ["--id", "a1", "--username", "root", "--email", "a@b"],
        ["--id", "a1", "--username", "r", "--email", "root@example.com"],
        ["--id", "bad id", "--username", "root", "--email", "root@example.com"], ["--id", "a1", "--username", "root"],
        ["--username", "root", "--email", "root@example.com"], ["--id", "a1", "--username", "root", "--email"],
    ])
    func invalidInputIsAUsageErrorAndCreatesNoStore(_ options: [String]) throws {
        try withTemporaryDirectory { dir in
            let result = try strata(["admin", "bootstrap", "--data", dir.path] + options, expecting: 2)
            #expect(!result.stderr.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/events.db"))
        }
    }

    /// Usernames are unique regardless of case, as the domain has them: an agent's name in
    /// another case is taken.
    @Test func aUsernameTakenInAnotherCaseIsRefused() throws {
        try withTemporaryDirectory { dir in
            do {
                let store = try SQLiteEventStore(path: dir.path + "/events.db")
                let writer = try CommandWriter(store: store, clock: SystemClock())
                let body = CommandBody(
                    id: "register-alice", type: "RegisterUser", actor: "agent-1",
                    payload: ["userId": "agent-1", "username": "Alice9", "email": "alice@example.com", "role": "AGENT"])
                let committed = writer.process([
                    CommandWriter.Pending(
                        routingId: [1], keyId: "svc", keyRoles: nil, body: body, bodyBytes: body.json,
                        arrivedAt: Timestamp.now(), configuration: DomainConfiguration())
                ])
                guard case .accepted? = committed.replies.first?.reply else {
                    Issue.record("the agent was not registered: \(committed.replies)")
                    return
                }
            }
            let bootstrap = ["admin", "bootstrap", "--data", dir.path, "--id", "admin-1"]
            let result = try strata(bootstrap + ["--username", "alice9", "--email", "r@example.com"], expecting: 1)
            #expect(result.stderr == "strata admin bootstrap: refused: username alice9 is taken\n")
            let email = try strata(bootstrap + ["--username", "root", "--email", "ALICE@example.com"], expecting: 1)
            #expect(email.stderr == "strata admin bootstrap: refused: that email belongs to another user\n")
        }
    }

    @Test func invalidEmailIsNamed() throws {
        try withTemporaryDirectory { dir in
            let result = try strata(
                ["admin", "bootstrap", "--data", dir.path, "--id", "a1", "--username", "root", "--email", "root@@example.com"],
                expecting: 2)
            #expect(result.stderr.contains("--email is not a valid email address"))
        }
    }

    /// While another process holds the store's writer lock (as `strata serve` does), the
    /// bootstrap refuses with exit 1. This test process is that other process.
    @Test func refusedWhileAnotherProcessHoldsTheStore() throws {
        try withTemporaryDirectory { dir in
            let path = dir.path + "/events.db"
            do {
                let store = try SQLiteEventStore(path: path)
                try withExtendedLifetime(store) {
                    let result = try strata(
                        ["admin", "bootstrap", "--data", dir.path, "--id", "a1", "--username", "root", "--email", "root@example.com"],
                        expecting: 1)
                    #expect(result.stderr.contains("another process"), "stderr: \(result.stderr)")
                    #expect(result.stderr.contains("pid \(getpid())"), "stderr: \(result.stderr)")
                    #expect(try store.head() == 0)
                }
            }
            // Once the holder has gone, the same command succeeds.
            try bootstrapAdmin(data: dir.path, id: "a1")
        }
    }
}

@Suite("strata verify")
struct VerifyTests {
    @Test func missingStoreIsAnEnvironmentError() throws {
        try withTemporaryDirectory { dir in
            let result = try strata(["verify", "--data", dir.path + "/absent"], expecting: 2)
            #expect(result.stderr.contains("no event store at"))
            // Nothing was created by looking.
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/absent"))
        }
    }

    /// What verify is for: a store it cannot read is a problem found (exit 1), like a broken
    /// chain, not an environment error; the message names the file and the way out.
    @Test func aFileThatIsNotADatabaseIsReportedDamaged() throws {
        try withTemporaryDirectory { dir in
            try writeText(String(repeating: "not a database ", count: 100), to: dir.path + "/events.db")
            let result = try strata(["verify", "--data", dir.path], expecting: 1)
            #expect(
                result.stderr == "strata verify: \(dir.path)/events.db is damaged: file is not a database (SQLite 26); "
                    + "restore it from a backup\n")
        }
    }

    @Test func unknownFormatIsAUsageError() throws {
        try withTemporaryDirectory { dir in
            try bootstrapAdmin(data: dir.path)
            let result = try strata(["verify", "--data", dir.path, "--format", "xml"], expecting: 2)
            #expect(result.stderr.contains("--format must be text or json"))
        }
    }

    @Test func tamperedDataIsFoundAtItsPosition() throws {
        try withTemporaryDirectory { dir in
            try bootstrapAdmin(data: dir.path)
            do {
                let c = try SQLiteConnection(path: dir.path + "/events.db", mode: .readWrite)
                try c.execute("UPDATE events SET data = replace(data, 'root', 'r00t') WHERE position = 1")
                #expect(c.changes == 1)
                #expect(try c.scalarText("SELECT data FROM events WHERE position = 1")?.contains("r00t") == true)
            }

            let text = try strata(["verify", "--data", dir.path], expecting: 1)
            #expect(text.stdout.contains("BROKEN at position 1"), "stdout: \(text.stdout)")

            let json = try strata(["verify", "--data", dir.path, "--format", "json"], expecting: 1)
            let report = try jsonLine(json.stdout.trimmingCharacters(in: .newlines))
            #expect(report["intact"] == false)
            #expect(report["problem"]?["position"] == 1)
            #expect(report["eventsVerified"] == 0)
        }
    }

    @Test func tamperedHashIsFound() throws {
        try withTemporaryDirectory { dir in
            try bootstrapAdmin(data: dir.path)
            do {
                let c = try SQLiteConnection(path: dir.path + "/events.db", mode: .readWrite)
                try c.execute("UPDATE events SET hash = '\(String(repeating: "0", count: 64))' WHERE position = 1")
                #expect(c.changes == 1)
            }
            let json = try strata(["verify", "--data", dir.path, "--format", "json"], expecting: 1)
            let report = try jsonLine(json.stdout.trimmingCharacters(in: .newlines))
            #expect(report["intact"] == false)
            #expect(report["problem"]?["position"] == 1)
        }
    }

    @Test func dataDirectoryFromAConfigFile() throws {
        try withTemporaryDirectory { dir in
            let data = dir.path + "/store"
            try bootstrapAdmin(data: data)
            let config = dir.path + "/strata-config.json"
            try writeConfig(["data": data], to: config)
            try strata(["verify", "--config", config], expecting: 0)
            try strata(["verify"], environment: ["STRATA_CONFIG": config], expecting: 0)
            // An implicit config that tries to move the data directory is refused.
            try writeConfig(["data": dir.path], to: data + "/strata.json")
            let moved = try strata(["verify", "--data", data], expecting: 2)
            #expect(moved.stderr.contains("cannot move the data directory"))
        }
    }
}

@Suite("strata bench")
struct BenchTests {
    /// One JSON line per figure, all of scenario "append" with positive medians: first the raw
    /// SQLite ceiling (rows/s), then figures measured against it, among them the two store
    /// append figures (events/s).
    @Test func appendJSON() throws {
        let result = try strata(["bench", "append", "--events", "200", "--repeat", "1", "--json"], expecting: 0)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        try #require(lines.count >= 3, "stdout: \(result.stdout)")
        #expect(result.stdout.hasSuffix("\n"))
        var storeFigures = 0
        for (index, line) in lines.enumerated() {
            let figure = try jsonLine(line)
            #expect(figure["scenario"] == "append")
            #expect(figure["runs"] == 1)
            let median = try #require(figure["median"]?.integerValue, "line: \(line)")
            #expect(median > 0)
            #expect(figure["min"]?.integerValue == median)
            #expect(figure["max"]?.integerValue == median)
            #expect(figure["measure"]?.stringValue?.isEmpty == false)
            // Every insert, raw or through the store, is made on the main thread.
            BenchCPUExpectations.check(figure["cpu"], threads: ["main"])
            if index == 0 {
                #expect(figure["unit"] == "rows/s")
                #expect(figure["ceilingMedian"] == JSONValue?.none)
            } else {
                #expect((figure["ceilingMedian"]?.integerValue ?? 0) > 0)
                #expect(figure["ratioPercent"]?.integerValue != nil)
            }
            if figure["unit"] == "events/s" {
                storeFigures += 1
                #expect(figure["measure"]?.stringValue?.hasPrefix("store append") == true)
            }
        }
        #expect(storeFigures == 2)
    }

    /// Over an even number of runs the median is the mean of the middle two, not the upper one
    /// (which over two runs is the maximum), and the ratios are taken from that median.
    @Test func theMedianOfTwoRunsIsTheirMean() throws {
        let result = try strata(["bench", "append", "--events", "100", "--repeat", "2", "--json"], expecting: 0)
        let figures = try result.stdout.split(separator: "\n").map { try jsonLine($0) }
        try #require(figures.count == 4, "stdout: \(result.stdout)")
        for figure in figures {
            let low = try #require(figure["min"]?.integerValue)
            let median = try #require(figure["median"]?.integerValue)
            let high = try #require(figure["max"]?.integerValue)
            // Each printed figure is its rate without the fraction, so the mean is within one.
            #expect(abs(median - (low + high) / 2) <= 1, "\(figure)")
        }
        for figure in figures.dropFirst() {
            #expect(figure["ceilingMedian"] == figures[0]["median"], "\(figure)")
        }
        #expect(figures[2]["sameSizeRawMedian"] == figures[1]["median"])
    }

    @Test func usageErrors() throws {
        try strata(["bench"], expecting: 2)
        let unknown = try strata(["bench", "nope"], expecting: 2)
        #expect(unknown.stderr.contains("unknown scenario 'nope'"))
        try strata(["bench", "append", "--events", "5"], expecting: 2)
        try strata(["bench", "append", "--repeat", "0"], expecting: 2)
        try strata(["bench", "append", "--events", "many"], expecting: 2)
    }

    /// A flag the scenario does not take is refused before anything runs, naming the ones it
    /// takes: ignored, it gave figures of another size than the one asked for (`rebuild
    /// --events 80000` rebuilt the default 10,000 loans' history) without a word.
    @Test(arguments: [
        (["append", "--loans", "5"], "--loans", "--events"), (["append", "--rate", "5"], "--rate", "--events"),
        (["lag", "--events", "1000"], "--events", "--loans, --rate and --seconds"),
        (["rebuild", "--events", "1000"], "--events", "--loans"), (["rebuild", "--rate", "5"], "--rate", "--loans"),
        (["rebuild", "--seconds", "1"], "--seconds", "--loans"), (["replay", "--loans", "5"], "--loans", "--events"),
        (["verify", "--seconds", "1"], "--seconds", "--events"),
        (["memory", "--rate", "5"], "--rate", "--events and --loans"),
        (["latency", "--metrics"], "--metrics", "--rate and --seconds"),
    ])
    func aFlagTheScenarioDoesNotTakeIsRefused(_ arguments: [String], _ flag: String, _ takes: String) throws {
        // The smallest sizes the scenario takes, so that a flag let through ends soon.
        let small = [
            "append": ["--events", "100"], "lag": ["--loans", "1", "--rate", "10", "--seconds", "1"],
            "rebuild": ["--loans", "1"], "replay": ["--events", "100"], "verify": ["--events", "100"],
            "memory": ["--events", "100", "--loans", "1"], "latency": ["--rate", "10", "--seconds", "1"],
        ]
        let result = try strata(
            ["bench"] + arguments + small[arguments[0], default: []] + ["--repeat", "1"], expecting: 2)
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr.contains("\(flag) is not for the \(arguments[0]) scenario, which takes \(takes)"),
            "\(result.stderr)")
    }
}
