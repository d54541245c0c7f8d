import EventStore
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

@testable import StrataCLI

// `strata replay` as its users run it: the real binary over a store with a known history.

/// One command of the fixture: who, when, and its events as (stream, type).
private struct FixtureCommand {
    let actor: String
    let at: String
    let events: [(String, String)]
}

/// Ten events over four categories (`loans` is there to be told apart from `loan`), six
/// types, five actors (`agent-1` is a prefix of `agent-10`; one needs escaping) and times
/// around midnights; positions 2 and 3 come from one command, at one instant.
private let history: [FixtureCommand] = [
    FixtureCommand(actor: "agent-1", at: "2026-11-20T10:00:00.000Z", events: [("loan-L1", "LoanRequested")]),
    FixtureCommand(
        actor: "admin-1", at: "2026-11-20T23:59:59.999Z",
        events: [("loan-L1", "LoanApproved"), ("account-A1", "AccountCredited")]),
    FixtureCommand(actor: "agent-2", at: "2026-11-21T00:00:00.000Z", events: [("invoice-I1", "InvoiceIssued")]),
    FixtureCommand(actor: "agent-1", at: "2026-11-21T09:30:00.000Z", events: [("loan-L2", "LoanRequested")]),
    FixtureCommand(actor: "agent-2", at: "2026-11-21T12:00:00.500Z", events: [("invoice-I1", "InvoicePaid")]),
    FixtureCommand(actor: "admin-1", at: "2026-11-22T08:00:00.000Z", events: [("loan-L2", "LoanApproved")]),
    FixtureCommand(actor: "agent-1", at: "2026-11-22T08:00:00.001Z", events: [("loan-L1", "PaymentReceived")]),
    FixtureCommand(actor: "agent-10", at: "2026-11-22T09:00:00.000Z", events: [("loan-L10", "LoanRequested")]),
    FixtureCommand(actor: #"o"p\q"#, at: "2026-11-23T00:00:00.000Z", events: [("loans-X1", "LoanNoted")]),
]

/// Writes the fixture's history into `data`/events.db and returns the stored events.
private func makeStore(_ data: String) throws -> [RecordedEvent] {
    try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
    let clock = FixedClock()
    let store = try SQLiteEventStore(path: data + "/events.db", clock: clock)
    for (index, entry) in history.enumerated() {
        clock.set(try #require(Timestamp(entry.at)))
        let events = try entry.events.map { stream, type in
            try NewEvent(
                stream: try #require(StreamName(stream)), type: type, schemaVersion: 1,
                data: ["amount": .integer(Int64(100 + index)), "note": "café \"quoted\" \u{2028} \\ end"])
        }
        let write = try CommandWrite(
            commandId: "c\(index + 1)", bodyDigest: HashChain.sha256(Array("c\(index + 1)".utf8)), keyId: "svc",
            actor: entry.actor, commandType: "TestCommand", correlationId: "corr-\(index + 1)",
            decision: .append(events, expectations: [:]))
        _ = try store.append(write)
    }
    return try store.events(after: 0, limit: 1000)
}

/// A store with `count` events of about 600 bytes of JSON each, in one category.
private func makeLargeStore(_ data: String, count: Int) throws {
    try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
    let store = try SQLiteEventStore(path: data + "/events.db")
    let note = JSONValue.string(String(repeating: "x", count: 300))
    for batch in stride(from: 0, to: count, by: 500) {
        let writes = try (batch..<min(count, batch + 500)).map { n in
            try CommandWrite(
                commandId: "c\(n)", bodyDigest: HashChain.sha256(Array("c\(n)".utf8)), actor: "agent-1",
                commandType: "TestCommand",
                decision: .append(
                    [
                        try NewEvent(
                            stream: StreamName("loan-L\(n)")!, type: "LoanRequested", schemaVersion: 1,
                            data: ["note": note])
                    ], expectations: [:]))
        }
        _ = try store.append(writes)
    }
}

/// The positions in jsonl output, in order.
private func positions(_ stdout: String) throws -> [Int64] {
    try stdout.split(separator: "\n").map { line in try #require(jsonLine(line)["position"]?.integerValue) }
}

/// `count` distinct categories no event has (`xaa`, `xab` …), comma-separated.
fileprivate func madeUpCategories(_ count: Int) -> String {
    let letters: [Character] = Array("abcdefghijklmnopqrstuvwxyz")
    let names: [String] = (0..<count).map { (n: Int) -> String in String(["x", letters[n / 26 % 26], letters[n % 26]]) }
    return names.joined(separator: ",")
}

@Suite("strata replay")
struct ReplayCommandTests {
    @Test(arguments: [
        ([], Array(1...10)),
        (["--from", "3"], Array(3...10)),
        (["--to", "4"], Array(1...4)),
        (["--from", "4", "--to", "6"], [4, 5, 6]),
        (["--from", "5", "--to", "5"], [5]),
        (["--from", "0", "--to", "1"], [1]),
        (["--to", "100"], Array(1...10)),
        (["--stream", "loan-L1"], [1, 2, 8]),
        (["--stream", "loan-L10"], [9]),
        (["--category", "loan"], [1, 2, 5, 7, 8, 9]),
        (["--category", "loans"], [10]),
        (["--category", "invoice,loans"], [4, 6, 10]),
        (["--category", "loan, invoice"], [1, 2, 4, 5, 6, 7, 8, 9]),
        (["--type", "LoanRequested"], [1, 5, 9]),
        (["--type", "LoanApproved,InvoicePaid"], [2, 6, 7]),
        (["--actor", "agent-1"], [1, 5, 8]),
        (["--actor", "agent-10"], [9]),
        (["--actor", "admin-1"], [2, 3, 7]),
        (["--actor", #"o"p\q"#], [10]),
        (["--since", "2026-11-21"], Array(4...10)),
        (["--until", "2026-11-20"], [1, 2, 3]),
        (["--since", "2026-11-21", "--until", "2026-11-21"], [4, 5, 6]),
        (["--since", "2026-11-21T09:30:00Z", "--until", "2026-11-22T08:00:00Z"], [5, 6, 7]),
        (["--since", "2026-11-22T08:00:00.001Z"], [8, 9, 10]),
        (["--since", "2026-11-21T15:00:00+05:30"], Array(5...10)),
        (["--until", "2026-11-21T05:29:59.999+05:30"], [1, 2, 3]),
        (["--until", "2026-11-20T18:59:59.998-05:00"], [1]),
        (["--until", "2026-11-22T13:30:00.0009+05:30"], Array(1...7)),
        (["--category", "loan", "--type", "LoanApproved", "--actor", "admin-1"], [2, 7]),
        (["--stream", "loan-L1", "--from", "2", "--to", "7"], [2]),
        (["--stream", "loan-L1", "--type", "PaymentReceived,LoanRequested"], [1, 8]),
        (["--category", "loan", "--since", "2026-11-21", "--until", "2026-11-22"], [5, 7, 8, 9]),
        (["--type", "LoanRequested", "--from", "2", "--actor", "agent-1"], [5]),
        (
            ["--type", "LoanRequested,LoanNoted", "--category", "loan,loans", "--until", "2026-11-22T09:00:00Z"],
            [1, 5, 9]
        ),
        (["--category", "invoice", "--actor", "agent-2", "--since", "2026-11-21T12:00:00.500Z"], [6]),
        // More categories than a few, and more than SQLite nests (a thousand): each still only itself.
        (["--category", madeUpCategories(20) + ",invoice,loans"], [4, 6, 10]),
        (["--category", madeUpCategories(1_200) + ",loan"], [1, 2, 5, 7, 8, 9]),
    ] as [([String], [Int64])])
    func filtersReturnExactlyTheirPositions(_ options: [String], _ expected: [Int64]) throws {
        try withTemporaryDirectory { dir in
            _ = try makeStore(dir.path)
            let result = try strata(["replay", "--data", dir.path] + options, expecting: 0)
            #expect(try positions(result.stdout) == expected)
            // Standard error is not a terminal here: no progress, no summary.
            #expect(result.stderr.isEmpty)
        }
    }

    @Test(arguments: [
        ["--from", "11"],
        ["--from", "0", "--to", "0"],
        ["--stream", "loan-L9"],
        ["--category", "user"],
        ["--type", "NeverHappened"],
        ["--actor", "agent"],
        ["--actor", "nobody"],
        ["--since", "2026-11-23T00:00:00.001Z"],
        ["--until", "2026-11-20T09:59:59.999Z"],
        ["--stream", "loan-L1", "--category", "invoice"],
    ])
    func anEmptyMatchExitsZeroWithoutOutput(_ options: [String]) throws {
        try withTemporaryDirectory { dir in
            _ = try makeStore(dir.path)
            let result = try strata(["replay", "--data", dir.path] + options, expecting: 0)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.isEmpty)
            let table = try strata(["replay", "--data", dir.path, "--format", "table"] + options, expecting: 0)
            #expect(table.stdout.isEmpty)
            #expect(table.stderr == "0 events\n")
        }
    }

    /// The lines are the bus format byte for byte, and the chain can be recomputed from them.
    @Test func linesAreTheStoredEventsAsTheBusCarriesThem() throws {
        try withTemporaryDirectory { dir in
            let stored = try makeStore(dir.path)
            #expect(stored.count == 10)
            let result = try strata(["replay", "--data", dir.path], expecting: 0)
            let expected = stored.map { String(decoding: $0.json, as: UTF8.self) + "\n" }.joined()
            #expect(result.stdout == expected)

            var previous = HashChain.genesisHex
            for line in result.stdout.split(separator: "\n") {
                let event = try RecordedEvent(jsonBytes: Array(line.utf8))
                #expect(event.continuesChain(from: previous), "position \(event.position)")
                #expect(String(decoding: event.json, as: UTF8.self) == line)
                previous = event.hash
            }
            #expect(previous == stored.last?.hash)

            let middle = try strata(["replay", "--data", dir.path, "--from", "4", "--to", "6"], expecting: 0)
            #expect(middle.stdout == stored[3...5].map { String(decoding: $0.json, as: UTF8.self) + "\n" }.joined())
        }
    }

    @Test func tableFormat() throws {
        try withTemporaryDirectory { dir in
            _ = try makeStore(dir.path)
            let result = try strata(["replay", "--data", dir.path, "--format", "table"], expecting: 0)
            #expect(
                result.stdout == """
                    position  recorded_at               stream      version  type             actor
                           1  2026-11-20T10:00:00.000Z  loan-L1           1  LoanRequested    agent-1
                           2  2026-11-20T23:59:59.999Z  loan-L1           2  LoanApproved     admin-1
                           3  2026-11-20T23:59:59.999Z  account-A1        1  AccountCredited  admin-1
                           4  2026-11-21T00:00:00.000Z  invoice-I1        1  InvoiceIssued    agent-2
                           5  2026-11-21T09:30:00.000Z  loan-L2           1  LoanRequested    agent-1
                           6  2026-11-21T12:00:00.500Z  invoice-I1        2  InvoicePaid      agent-2
                           7  2026-11-22T08:00:00.000Z  loan-L2           2  LoanApproved     admin-1
                           8  2026-11-22T08:00:00.001Z  loan-L1           3  PaymentReceived  agent-1
                           9  2026-11-22T09:00:00.000Z  loan-L10          1  LoanRequested    agent-10
                          10  2026-11-23T00:00:00.000Z  loans-X1          1  LoanNoted        o"p\\q

                    """)
            #expect(result.stderr == "10 events, positions 1–10\n")

            let one = try strata(
                ["replay", "--data", dir.path, "--format", "table", "--stream", "loan-L10"], expecting: 0)
            #expect(
                one.stdout == """
                    position  recorded_at               stream    version  type           actor
                           9  2026-11-22T09:00:00.000Z  loan-L10        1  LoanRequested  agent-10

                    """)
            #expect(one.stderr == "1 event, position 9\n")
        }
    }

    /// A cell's control characters are shown as escapes, as in every table the command line
    /// prints: an actor rewritten outside Strata can neither print a line that reads as an
    /// event of its own nor send the terminal an escape sequence.
    @Test func tableShowsControlCharactersAsEscapes() throws {
        try withTemporaryDirectory { dir in
            _ = try makeStore(dir.path)
            let forged = "      11  2026-11-24T00:00:00.000Z  loan-L9  1  LoanApproved  admin-1"
            let edit = try SQLiteConnection(path: dir.path + "/events.db", mode: .readWrite)
            try edit.execute(
                "UPDATE events SET metadata = json_set(metadata, '$.actor', 'x' || char(27) || '[2J' || char(10) "
                    + "|| '\(forged)') WHERE position = 1")
            edit.close()
            let result = try strata(["replay", "--data", dir.path, "--format", "table", "--to", "2"], expecting: 0)
            let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.count == 4 && lines.last == "", "\(result.stdout)")
            #expect(!result.stdout.unicodeScalars.contains("\u{1b}"))
            #expect(lines[1].hasSuffix(#"x\u{1b}[2J\n"# + forged), "\(lines[1])")
        }
    }

    /// A page of rows sets the widths; later pages only widen them.
    @Test func tableColumnsWidenPageByPage() {
        var table = ReplayTable(pageSize: 3)
        var lines: [String] = []
        table.add(["1", "2026-11-20T10:00:00.000Z", "loan-L1", "1", "A", "x"]) { lines.append($0) }
        table.add(["2", "2026-11-20T10:00:00.000Z", "loan-L2", "1", "B", "y"]) { lines.append($0) }
        #expect(lines.count == 3)
        table.add(["10", "2026-11-20T10:00:00.000Z", "loan-L12345", "12", "CC", "zz"]) { lines.append($0) }
        table.add(["11", "2026-11-20T10:00:00.000Z", "a-1", "1", "D", "w"]) { lines.append($0) }
        table.add(["12", "2026-11-20T10:00:00.000Z", "業務-1", "1", "E", "v"]) { lines.append($0) }
        table.flush { lines.append($0) }
        #expect(
            lines == [
                "position  recorded_at               stream   version  type  actor",
                "       1  2026-11-20T10:00:00.000Z  loan-L1        1  A     x",
                "       2  2026-11-20T10:00:00.000Z  loan-L2        1  B     y",
                "      10  2026-11-20T10:00:00.000Z  loan-L12345       12  CC    zz",
                "      11  2026-11-20T10:00:00.000Z  a-1                1  D     w",
                // Two columns a CJK character on a terminal.
                "      12  2026-11-20T10:00:00.000Z  業務-1             1  E     v",
            ])
    }

    @Test(arguments: [
        (["--format", "xml"], "--format must be jsonl or table, got 'xml'"),
        (["--from", "5", "--to", "4"], "--from 5 is after --to 4"),
        (["--from", "-1"], "--from must be a position (an integer ≥ 0), got '-1'"),
        (["--to", "x"], "--to must be a position (an integer ≥ 0), got 'x'"),
        (["--stream", "nodash"], "--stream 'nodash' is not a stream name"),
        (["--category", "Loan"], "--category: 'Loan' is not a category (1–32 lowercase letters)"),
        (["--category", ","], "--category needs at least one category"),
        (["--type", "loanApproved"], "--type: 'loanApproved' is not an event type"),
        (["--since", "yesterday"], "--since 'yesterday' is not a time: give RFC 3339"),
        (["--until", "2026-13-01"], "--until '2026-13-01' is not a time"),
        (["--since", "2026-11-20T10:00:00"], "--since '2026-11-20T10:00:00' is not a time"),
        (["--since", "2026-11-20T10:00:00+5:30"], "--since '2026-11-20T10:00:00+5:30' is not a time"),
        (
            ["--since", "2026-11-22", "--until", "2026-11-21"],
            "--since 2026-11-22T00:00:00.000Z is after --until 2026-11-21T23:59:59.999Z"
        ),
        (["--actor", String(repeating: "a", count: 129)], "--actor is at most 128 bytes"),
        (["--nope"], "unknown option '--nope'"),
    ] as [([String], String)])
    func badInputIsAUsageError(_ options: [String], _ message: String) throws {
        try withTemporaryDirectory { dir in
            _ = try makeStore(dir.path)
            let result = try strata(["replay", "--data", dir.path] + options, expecting: 2)
            #expect(result.stderr.hasPrefix("strata replay: "))
            #expect(result.stderr.contains(message), "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func noStoreIsAnEnvironmentError() throws {
        try withTemporaryDirectory { dir in
            let result = try strata(["replay", "--data", dir.path + "/absent"], expecting: 2)
            #expect(result.stderr.contains("no event store at \(dir.path)/absent/events.db"))
            #expect(result.stdout.isEmpty)
        }
    }

    /// `strata replay | head -1`: the reader goes away after one line; replay stops quietly, exit 0.
    @Test func aClosedPipeEndsQuietly() throws {
        try withTemporaryDirectory { dir in
            // About 3 MB of JSON: more than the output buffer and any pipe holds.
            try makeLargeStore(dir.path, count: 5000)
            let status = dir.path + "/status"
            let script = #"("$0" replay --data "$1"; echo $? > "$2") | head -1"#
            let result = try ChildProcess.run(
                URL(fileURLWithPath: "/bin/sh"), ["-c", script, ChildProcess.product("strata").path, dir.path, status])
            #expect(result.exitCode == 0)
            #expect(result.stderr.isEmpty, "\(result.stderr)")
            let line = try jsonLine(result.stdout.dropLast())
            #expect(line["position"]?.integerValue == 1)
            #expect(try String(contentsOfFile: status, encoding: .utf8) == "0\n")

            // The table too, and without a summary: the count would not be what the reader got.
            let tableScript = #"("$0" replay --data "$1" --format table; echo $? > "$2") | head -1"#
            let table = try ChildProcess.run(
                URL(fileURLWithPath: "/bin/sh"),
                ["-c", tableScript, ChildProcess.product("strata").path, dir.path, status])
            #expect(table.stdout == "position  recorded_at               stream     version  type           actor\n")
            #expect(table.stderr.isEmpty, "\(table.stderr)")
            #expect(try String(contentsOfFile: status, encoding: .utf8) == "0\n")

            // Read to the end, the same store gives every event.
            let all = try strata(["replay", "--data", dir.path], expecting: 0)
            #expect(try positions(all.stdout) == Array(1...5000))
        }
    }

    /// A store found damaged, at open or at a row on the way, is a problem found (exit 1), as
    /// `verify` says of it; the events before a damaged row are printed, nothing after it.
    @Test func aDamagedStoreIsAProblemFoundWhereverReplayMeetsIt() throws {
        try withTemporaryDirectory { dir in
            _ = try makeStore(dir.path)
            let edit = try SQLiteConnection(path: dir.path + "/events.db", mode: .readWrite)
            try edit.execute("UPDATE events SET version = version + 0.5 WHERE position = 4")
            edit.close()
            let row = try strata(["replay", "--data", dir.path], expecting: 1)
            #expect(try positions(row.stdout) == [1, 2, 3])
            #expect(row.stderr.contains("is damaged: the event at position 4"), "\(row.stderr)")

            let garbage = dir.path + "/garbage"
            try FileManager.default.createDirectory(atPath: garbage, withIntermediateDirectories: true)
            let bytes = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7919) })
            _ = FileManager.default.createFile(atPath: garbage + "/events.db", contents: bytes)
            let open = try strata(["replay", "--data", garbage], expecting: 1)
            #expect(open.stdout.isEmpty)
        }
    }

    /// Any other failure to write is an environment error, exit 2.
    @Test func aFullDiskIsAnEnvironmentError() throws {
        try withTemporaryDirectory { dir in
            _ = try makeStore(dir.path)
            let result = try ChildProcess.run(
                URL(fileURLWithPath: "/bin/sh"),
                ["-c", #""$0" replay --data "$1" > /dev/full"#, ChildProcess.product("strata").path, dir.path])
            #expect(result.exitCode == 2)
            #expect(result.stderr == "strata replay: cannot write the output: No space left on device\n")
        }
    }
}
