import CommandService
import Events
import Foundation
import ProjectorRuntime
import Projections
import StrataCore
import StrataSQLite
import StrataTesting
import SubjectKeys
import Synchronization
import Testing

/// The projectors as real processes beside a real `strata serve`: started late, they end
/// equal to a rebuild from the store (the fault suite kills, stops and strands them).
@Suite(.serialized) struct ProjectorProcessTests {
    @Test func aProjectorStartedAfterTenThousandEventsCatchesUp() throws {
        let system = try System("late")
        try system.send(system.workload.setup())
        try system.send((0..<2600).flatMap { system.workload.loan($0) })
        let head = try system.service.store().head()
        #expect(head > 10_000)

        let projectors = try ["readmodels", "audit"].map { try system.projector($0) }
        for projector in projectors {
            let name = projector.arguments[1]
            try system.waitForCheckpoint(name, head)
            let caughtUp = try projector.waitForLine(containing: "caught up through history on start")
            #expect(caughtUp.contains("position=\(head)") || caughtUp.contains(": events="), "\(caughtUp)")
            try system.expectEqualToRebuild(name)
        }
        // Live again after catching up: one more loan reaches both files.
        try system.send(system.workload.loan(2600))
        let after = try system.service.store().head()
        for projector in projectors { try system.waitForCheckpoint(projector.arguments[1], after) }
    }

    /// A reader that held back the WAL's truncation after an erasure lets go, and no event
    /// follows: the projector truncates it all the same, so the erased borrower's name leaves
    /// the WAL of a quiet system too. It stayed there until the next event, however long.
    @Test func anErasureHeldBackByAReaderLeavesTheLogThoughNoEventFollows() throws {
        let system = try System("quiet-erasure")
        try system.send(system.workload.setup())
        let account = system.workload.accountId(0)
        let name = "Zebulon Quixotic-Wal"
        try system.send([
            CommandBody(
                id: "rename", type: "UpdateAccount", actor: ServiceProcess.admin,
                payload: ["accountId": .string(account), "name": .string(name)])
        ])
        let projector = try system.projector("readmodels")
        defer { projector.stop() }
        try system.waitForCheckpoint("readmodels", try system.service.store().head())
        let path = system.data.appendingPathComponent("readmodels.db").path
        func holdsName() -> Bool {
            let bytes = ["", "-wal"].flatMap { (try? Array(Data(contentsOf: URL(fileURLWithPath: path + $0)))) ?? [] }
            return bytes.contains(Array(name.utf8))
        }
        #expect(holdsName())

        let reader = try SQLiteConnection(path: path, mode: .readOnly)
        try reader.execute("BEGIN")
        #expect(try reader.scalarText("SELECT name FROM accounts WHERE account_id = '\(account)'") == name)
        try system.send([
            CommandBody(
                id: "erase", type: "EraseSubject", actor: ServiceProcess.admin,
                payload: ["subjectId": .string(account), "kind": "ACCOUNT", "reason": "asked"])
        ])
        try system.waitForCheckpoint("readmodels", try system.service.store().head())
        #expect(holdsName(), "the reader did not hold the truncation back")
        try reader.execute("COMMIT")
        reader.close()

        let deadline = Date().addingTimeInterval(5)
        while holdsName() && Date() < deadline { usleep(100_000) }
        #expect(!holdsName(), "\(name) is still in readmodels.db or its WAL")
    }
}

/// Counts users, and cannot apply a user named "poison".
private struct Users: Projection {
    var name: String { "users" }
    var schema: ProjectionSchema {
        ProjectionSchema(version: 1, statements: ["CREATE TABLE users (user_id TEXT PRIMARY KEY)"])
    }
    var categories: [String]? { ["user"] }

    struct Refused: Error, CustomStringConvertible { var description: String { "poison is not a username" } }

    func apply(_ event: ProjectedEvent, to tables: any ProjectionTables) throws {
        guard case .userRegistered(let user) = event.event else { return }
        if user.username == "poison" { throw Refused() }
        try tables.execute("INSERT INTO users VALUES (?)", [.text(user.userId)])
    }
}

@Suite(.serialized) struct PoisonEventTests {
    /// An event whose bytes were changed in the store breaks the chain: the projector stops
    /// there, says so, `status` shows it, and no operator's skip moves it on (it would take the
    /// tampered event's word for its hash); events.db restored from a backup and --resume do.
    @Test func aTamperedEventStopsTheProjectorUntilTheStoreIsRestored() throws {
        let system = try System("poison")
        try system.send(system.workload.setup())
        try system.send((0..<20).flatMap { system.workload.loan($0) })
        let backup = try system.backUpStore()
        defer { try? FileManager.default.removeItem(at: backup) }
        let victim: Int64 = 30
        try Self.alterStore(
            system, "UPDATE events SET data = replace(data, 'acct', 'acxt') WHERE position = ?", [.integer(victim)])
        let head = try system.service.store().head()

        let projector = try system.projector("readmodels")
        #expect(projector.waitForExit(timeout: 60) == 1, "\(projector.log)")
        #expect(projector.log.contains("stopped at position \(victim)"), "\(projector.log)")
        #expect(projector.log.contains("hash chain is broken"), "\(projector.log)")
        // It stopped short of the head: history was read, but it did not catch up.
        #expect(!projector.log.contains("caught up through history"), "\(projector.log)")

        let status = try ChildProcess.strata(["status", "--format", "json", "--data", system.data.path])
        #expect(status.exitCode == 1)
        let json = try JSONParser.parse(status.stdout)
        #expect(json["projections"]?["readmodels"] == .integer(victim - 1), "\(status.stdout)")
        #expect(json["errors"]?["readmodels"]?.stringValue?.contains("position \(victim)") == true, "\(status.stdout)")
        // The stopped file equals a rebuild up to the event before the stop, and the rebuild says where it stopped.
        let compared = try ChildProcess.strata(["rebuild", "readmodels", "--compare", "--data", system.data.path])
        #expect(compared.exitCode == 0, "\(compared.stdout)\(compared.stderr)")
        #expect(compared.stdout.contains("equal: the live readmodels at position \(victim - 1)"), "\(compared.stdout)")
        #expect(compared.stdout.contains("the live readmodels is stopped at position \(victim)"), "\(compared.stdout)")

        // Starting it again without an operator's act refuses, naming the way out, which is no skip.
        let again = try system.projector("readmodels")
        #expect(again.waitForExit(timeout: 60) == 1)
        #expect(again.log.contains("run `strata verify`, restore events.db from a backup"), "\(again.log)")
        #expect(!again.log.contains("--skip"), "\(again.log)")
        try Self.expectNotSkipped(system, "readmodels", at: victim, ["--skip", "\(victim)", "--reason", "tampered"])

        // The store put right, the same event applies: the projector runs to the head.
        try Self.restoreAndResume(system, from: backup, at: victim, head: head)
    }

    /// A row deleted from `events.db` leaves history with no event at its position: the projector
    /// stops at the event after it as at any break in the chain, recorded in the file, which
    /// `status` and `rebuild` show, until the store is restored and it resumes. It ended with
    /// `readmodels expected position 20, handed 21`, recording nothing, while `status` said all
    /// was well (exit 0) and a rebuild named no break either.
    @Test func aRemovedEventStopsTheProjectorAsABrokenChain() throws {
        let system = try System("removed")
        try system.send(system.workload.setup())
        try system.send((0..<5).flatMap { system.workload.loan($0) })
        let backup = try system.backUpStore()
        defer { try? FileManager.default.removeItem(at: backup) }
        let victim: Int64 = 20
        try Self.alterStore(system, "DELETE FROM events WHERE position = ?", [.integer(victim)])
        let head = try system.service.store().head()

        let projector = try system.projector("readmodels")
        #expect(projector.waitForExit(timeout: 60) == 1, "\(projector.log)")
        #expect(projector.log.contains("stopped at position \(victim + 1)"), "\(projector.log)")
        #expect(projector.log.contains("hash chain is broken: no event at position \(victim)"), "\(projector.log)")
        let status = try ChildProcess.strata(["status", "--format", "json", "--data", system.data.path])
        #expect(status.exitCode == 1, "\(status.stdout)")
        let json = try JSONParser.parse(status.stdout)
        #expect(json["projections"]?["readmodels"] == .integer(victim - 1), "\(status.stdout)")
        #expect(
            json["errors"]?["readmodels"]?.stringValue?.contains("no event at position \(victim)") == true,
            "\(status.stdout)")
        let compared = try ChildProcess.strata(["rebuild", "readmodels", "--compare", "--data", system.data.path])
        #expect(compared.exitCode == 0, "\(compared.stdout)\(compared.stderr)")
        #expect(compared.stdout.contains("equal: the live readmodels at position \(victim - 1)"), "\(compared.stdout)")
        let skipping = try system.projector("readmodels", ["--skip", "\(victim + 1)", "--reason", "a gap"])
        #expect(skipping.waitForExit(timeout: 30) == 1, "\(skipping.log)")
        #expect(skipping.log.contains("cannot skip position \(victim + 1)"), "\(skipping.log)")

        try Self.restoreAndResume(system, from: backup, at: victim, head: head)
    }

    /// An event whose prevHash is not the hash before it: the store's chain from there on is not
    /// the one the file applied. Skipping it would carry on along that chain, splicing it onto the
    /// file's (the audit log would then attest to a chain that is none): both projectors refuse.
    @Test(arguments: ["readmodels", "audit"])
    func aSkipIsRefusedWhereTheChainIsBroken(name: String) throws {
        let system = try System("broken-link-\(name)")
        try system.send(system.workload.setup())
        try system.send((0..<5).flatMap { system.workload.loan($0) })
        let victim: Int64 = 20
        try Self.alterStore(
            system, "UPDATE events SET prev_hash = ? WHERE position = ?",
            [.text(String(repeating: "ab", count: 32)), .integer(victim)])

        let projector = try system.projector(name)
        #expect(projector.waitForExit(timeout: 60) == 1, "\(projector.log)")
        #expect(projector.log.contains("stopped at position \(victim)"), "\(projector.log)")
        #expect(projector.log.contains("is not the hash of position \(victim - 1)"), "\(projector.log)")
        #expect(projector.log.contains("no skip mends"), "\(projector.log)")
        try Self.expectNotSkipped(system, name, at: victim, ["--skip", "\(victim)", "--reason", "looks harmless"])
    }

    /// Stops the service, changes one row of `events.db` with `sql`, and starts the service again:
    /// a store altered behind its back.
    static func alterStore(
        _ system: System, _ sql: String, _ values: [SQLiteValue], sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        system.service.stop()
        do {
            let store = try SQLiteConnection(path: system.storePath, mode: .readWrite)
            try store.statement(sql).run(values)
            #expect(store.changes == 1, sourceLocation: sourceLocation)
        }
        try system.restartService()
    }

    /// With `events.db` put back from `backup`, the projector stopped at `victim` resumes there,
    /// reaches `head`, and equals a rebuild.
    static func restoreAndResume(
        _ system: System, from backup: URL, at victim: Int64, head: Int64,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        try system.restoreStore(backup)
        let resuming = try system.projector("readmodels", ["--resume"])
        try resuming.waitForLine(containing: "resuming at position \(victim)")
        try system.waitForCheckpoint("readmodels", head)
        #expect(resuming.stop() == 0, "\(resuming.log)", sourceLocation: sourceLocation)
        try system.expectEqualToRebuild("readmodels")
    }

    /// `--skip` at a broken chain: exit 1, naming why and the way out; the file keeps its stop and
    /// records no skip.
    static func expectNotSkipped(
        _ system: System, _ name: String, at victim: Int64, _ act: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let skipping = try system.projector(name, act)
        let exit = skipping.waitForExit(timeout: 30)
        if exit == nil { skipping.stop() }
        #expect(exit == 1, "\(skipping.log)", sourceLocation: sourceLocation)
        #expect(
            skipping.log.contains("cannot skip position \(victim)"), "\(skipping.log)", sourceLocation: sourceLocation)
        #expect(skipping.log.contains("`strata verify`"), "\(skipping.log)", sourceLocation: sourceLocation)
        #expect(!skipping.log.contains("skipped position"), "\(skipping.log)", sourceLocation: sourceLocation)
        let snapshot = try #require(
            try ProjectionSnapshot(path: system.data.appendingPathComponent("\(name).db").path),
            sourceLocation: sourceLocation)
        #expect(snapshot.checkpoint == victim - 1, sourceLocation: sourceLocation)
        #expect(snapshot.stop?.position == victim, sourceLocation: sourceLocation)
        #expect(try snapshot.skips().isEmpty, sourceLocation: sourceLocation)
    }

    /// An ordinary poison event is still passed over by --skip, in either projection, also where
    /// an earlier version recorded the stop (without its kind): the projector runs to the head, and
    /// a rebuild, which passes over the same event, equals the file.
    @Test(arguments: ["readmodels", "audit"], [false, true])
    func aSkipPassesOverAPoisonEvent(name: String, earlierFile: Bool) throws {
        let system = try System("skip-\(name)")
        try system.send(system.workload.setup())
        let first = try system.projector(name)
        let checkpoint = try system.service.store().head()
        try system.waitForCheckpoint(name, checkpoint)
        #expect(first.stop() == 0, "\(first.log)")
        // A user nothing later refers to, so that the events after it apply without it.
        try system.send([
            CommandBody(
                id: "register-skipped", type: "RegisterUser", actor: "skipped",
                payload: ["userId": "skipped", "username": "skipped", "email": "skipped@example.com", "role": "AGENT"])
        ])
        let poison = checkpoint + 1
        try system.send((0..<3).flatMap { system.workload.loan($0) })
        let head = try system.service.store().head()
        do {
            let file = try SQLiteConnection(
                path: system.data.appendingPathComponent("\(name).db").path, mode: .readWrite)
            try file.statement(
                """
                UPDATE strata_checkpoint SET stopped_position = ?, stopped_stream = 'user-skipped',
                  stopped_type = 'UserRegistered', stopped_error = 'users cannot apply it: a test',
                  stopped_kind = 'POISON'
                """
            ).run([.integer(poison)])
            if earlierFile { try file.execute("ALTER TABLE strata_checkpoint DROP COLUMN stopped_kind") }
        }
        let skipping = try system.projector(name, ["--skip", "\(poison)", "--reason", "a test"])
        try skipping.waitForLine(containing: "skipped position \(poison)")
        try system.waitForCheckpoint(name, head)
        #expect(skipping.stop() == 0, "\(skipping.log)")
        let snapshot = try #require(try ProjectionSnapshot(path: system.data.appendingPathComponent("\(name).db").path))
        #expect(try snapshot.skips().map(\.position) == [poison])
        try system.expectEqualToRebuild(name)
    }

    /// A stop asked for while the live batch in hand holds a poison event ends the projector
    /// at that event, as any poison event does, not as a clean stop.
    @Test func aStopAskedForDuringAPoisonedLiveBatchEndsAtThePoisonEvent() throws {
        let system = try System("poison-stopping")
        let path = system.data.appendingPathComponent("users.db").path
        let key = try #require(try system.service.keyFile().key(ServiceProcess.Keys.service))
        let settings = Projector.Settings(
            name: "users", databasePath: path, eventsEndpoint: system.service.events,
            historyEndpoint: system.service.history, key: key)
        let started = Mutex<Projector?>(nil)
        let projector = try Projector.start(settings, projections: [Users()], logger: Logger(label: "test")) { commit in
            // As SIGTERM would, right as the batch with the poison event is applied.
            if commit.events.contains(where: { $0.stream == "user-poisoner" }) { started.withLock { $0?.stop() } }
        }
        started.withLock { $0 = projector }
        let head = try system.service.store().head()
        try system.waitForCheckpoint("users", head)

        // Sent once the projector is caught up, so it arrives on the bus, not through history.
        try system.send([
            CommandBody(
                id: "register-poisoner", type: "RegisterUser", actor: "poisoner",
                payload: [
                    "userId": "poisoner", "username": "poison", "email": "poisoner@example.com", "role": "AGENT",
                ])
        ])
        let exit = projector.wait()
        let stop = try #require(try ProjectionSnapshot(path: path)?.stop)
        #expect(stop.position == head + 1 && stop.stream == "user-poisoner")
        #expect(exit == .poisoned(stop))
    }
}

@Suite(.serialized) struct HistoryRefusalTests {
    /// A projector away from the service asks history to open personal data; when a sealed
    /// value does not open with its key (here the key store was altered), every retry would
    /// get the same refusal, so the projector ends, naming the cause, instead of retrying.
    @Test func aProjectorAwayFromTheServiceEndsWhenHistoryCannotOpenPersonalData() throws {
        let system = try System("unreadable")
        let remote = try ChildProcess.temporaryDirectory("strata-unreadable-remote")
        defer { try? FileManager.default.removeItem(at: remote) }
        let made = try ChildProcess.strata(
            ["keys", "new", "pd-reader", "--scope", "history,personal-data", "--data", system.data.path])
        try #require(made.exitCode == 0, "\(made.stderr)")
        try system.restartService()  // it reads the key file when it starts
        try system.send(system.workload.setup())
        system.service.stop()
        do {
            let keys = try SQLiteConnection(
                path: system.data.appendingPathComponent(SubjectKeyStore.fileName).path, mode: .readWrite)
            try keys.execute(
                "UPDATE subject_keys SET secret = randomblob(length(secret)) WHERE subject = (SELECT min(subject) "
                    + "FROM subject_keys WHERE subject LIKE 'account%')")
            #expect(keys.changes == 1)
        }
        try system.restartService()

        let projector = try StrataProcess(
            ["project", "readmodels", "--data", remote.path, "--events", system.service.events]
                + ["--history", system.service.history, "--keys", system.data.appendingPathComponent("keys.json").path]
                + ["--key", "pd-reader", "--open-through-history"])
        #expect(projector.waitForExit(timeout: 30) == 1, "\(projector.log)")
        #expect(projector.log.contains("INTERNAL PERSONAL_DATA_UNREADABLE"), "\(projector.log)")
        #expect(!projector.log.contains("retrying"), "\(projector.log)")
        // The answer names no position: nothing is recorded as a stop in the file.
        let snapshot = try ProjectionSnapshot(path: remote.appendingPathComponent("readmodels.db").path)
        #expect(snapshot?.stop == nil)
    }
}

@Suite(.serialized) struct KeyRefusalTests {
    /// `strata keys new ID`, then at once a projector with `--key ID`: the service rereads its key
    /// file once a second, so history refuses the first requests as from an unknown key. Such a
    /// refusal is asked again for a few seconds before it counts: the projector ended with exit 1
    /// at once. A key the service never learns (the projector's own key file) still ends it.
    @Test func aKeyMadeJustBeforeItsProjectorStartsIsWaitedFor() throws {
        let system = try System("fresh-key")
        try system.send(system.workload.setup())
        let head = try system.service.store().head()
        let made = try ChildProcess.strata(
            ["keys", "new", "fresh", "--scope", "history", "--data", system.data.path])
        try #require(made.exitCode == 0, "\(made.stderr)")
        let endpoints = ["--events", system.service.events, "--history", system.service.history]
        let projector = try StrataProcess(
            ["project", "audit", "--data", system.data.path, "--key", "fresh"] + endpoints)
        try system.waitForCheckpoint("audit", head, timeout: 30)
        projector.send(signal: SIGTERM)
        #expect(projector.waitForExit(timeout: 20) == 0, "\(projector.log)")

        let elsewhere = try ChildProcess.temporaryDirectory("strata-unknown-key")
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        let unknown = try ChildProcess.strata(
            ["keys", "new", "stranger", "--scope", "history", "--data", elsewhere.path])
        try #require(unknown.exitCode == 0, "\(unknown.stderr)")
        let stranger = try StrataProcess(
            ["project", "audit", "--data", elsewhere.path, "--key", "stranger"] + endpoints)
        #expect(stranger.waitForExit(timeout: 30) == 1, "\(stranger.log)")
        #expect(stranger.log.contains("history refused the request: UNAUTHENTICATED"), "\(stranger.log)")
    }
}

@Suite struct ProjectorStopTests {
    /// A stop that comes while the projector waits for history's answer (no service yet) ends it
    /// at once, and its log says it stopped: it said it would ask history again a second after
    /// each try, as if the service were the trouble, on its way out.
    @Test func aStopWhileHistoryIsAwaitedSaysItStopped() throws {
        let data = try ChildProcess.temporaryDirectory("strata-stop-awaiting")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let ports = try ServiceProcess.Ports.free()
        let projector = try StrataProcess(
            ["project", "audit", "--data", data.path, "--events", "tcp://127.0.0.1:\(ports.events)"]
                + ["--history", "tcp://127.0.0.1:\(ports.history)"])
        try projector.waitForLine(containing: "ready name=audit")
        // Within history's first 5 s wait for an answer that no service sends.
        usleep(1_000_000)
        projector.send(signal: SIGTERM)
        #expect(projector.waitForExit(timeout: 20) == 0, "\(projector.log)")
        #expect(projector.log.contains("stopped position=0"), "\(projector.log)")
        #expect(!projector.log.contains("asking again"), "\(projector.log)")
    }
}
