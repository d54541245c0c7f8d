import CommandService
import EventStore
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import SubjectKeys
import Testing
import Workloads

/// `strata backup`: a copy of the store and its key store taken beside a running service,
/// verified, complete or absent, and one a restored service serves from (docs/cli.md).
@Suite struct BackupTests {
    /// Taken while commands keep arriving, the copy is the store as one commit left it: every
    /// event up to its head exactly as the store holds it, the chain verified, both files
    /// self-contained. A data directory made of it, with the operator's secrets, starts, opens
    /// the personal data, and appends after the copied head.
    @Test func aBackupTakenUnderLoadIsAVerifiedCopyThatARestoredServiceServes() throws {
        let system = try System("backup")
        let backups = try ChildProcess.temporaryDirectory("strata-backups")
        defer { try? FileManager.default.removeItem(at: backups) }
        try system.send(system.workload.setup())
        let headBefore = try system.service.store().head()
        let load = system.sendInBackground((0..<1200).flatMap { system.workload.loan($0) })
        // The backup starts once the load is well under way.
        let deadline = Date().addingTimeInterval(60)
        while try system.service.store().head() < headBefore + 100, Date() < deadline { usleep(10_000) }

        let output = backups.appendingPathComponent("b1").path
        let result = try ChildProcess.strata(
            ["backup", "--data", system.data.path, "--output", output, "--format", "json"])
        let stillLoading = !load.isDone()
        try load.wait()
        #expect(result.exitCode == 0, "\(result.stdout)\(result.stderr)")
        let summary = try JSONParser.parse(result.stdout)
        let head = try #require(summary["head"]?.integerValue)
        let finalHead = try system.service.store().head()
        #expect(head > headBefore + 100 && head <= finalHead)
        #expect(stillLoading && head < finalHead, "taken while the load ran: copied \(head) of \(finalHead)")
        print("backup under load: copied head \(head) (\(headBefore) before the load) of \(finalHead) events")
        #expect(summary["eventsVerified"]?.integerValue == head)
        #expect(summary["files"] == ["events.db", "subject-keys.db"])
        #expect(summary["erasedKeysLeftOut"] == 0)

        // Exactly the store's first `head` events, byte for byte, and its hash at that head.
        let columns = "position, stream, version, type, schema_version, recorded_at, data, metadata, prev_hash, hash"
        func rows(_ path: String) throws -> [String] {
            let c = try SQLiteConnection(path: path, mode: .readOnly)
            defer { c.close() }
            let s = try c.statement("SELECT \(columns) FROM events WHERE position <= ? ORDER BY position")
            try s.bind([.integer(head)])
            var rows: [String] = []
            while try s.step() {
                rows.append((0..<10).map { s.isNull($0) ? "NULL" : s.text($0) }.joined(separator: "|"))
            }
            return rows
        }
        let copied = try rows(output + "/events.db")
        #expect(copied.count == head)
        #expect(copied == (try rows(system.storePath)))
        let hash = try SQLiteConnection(path: system.storePath, mode: .readOnly)
            .scalarText("SELECT hash FROM events WHERE position = ?", .integer(head))
        #expect(summary["hash"] == hash.map(JSONValue.string))

        // Two self-contained files, readable by their owner alone, and nothing else left behind.
        let files = ["events.db", "subject-keys.db"]
        #expect(try FileManager.default.contentsOfDirectory(atPath: output).sorted() == files)
        #expect(try FileManager.default.contentsOfDirectory(atPath: backups.path) == ["b1"])
        #expect(try permissions(output) == 0o700)
        for name in files { #expect(try permissions(output + "/" + name) == 0o600, "\(name)") }
        let keysPath = system.data.appendingPathComponent(SubjectKeyStore.fileName).path
        let keys = try SQLiteConnection(path: keysPath, mode: .readOnly)
        #expect(summary["subjectKeys"]?.integerValue == (try keys.scalarInteger("SELECT count(*) FROM subject_keys")))

        // Restored: the backup's files and the operator's secrets make a data directory a service
        // starts on, at the copied head, appending after it.
        let restored = try ChildProcess.temporaryDirectory("strata-restored")
        defer { try? FileManager.default.removeItem(at: restored) }
        for name in files {
            try FileManager.default.copyItem(
                atPath: output + "/" + name, toPath: restored.appendingPathComponent(name).path)
        }
        for name in ["keys.json", "checkpoint.key", "checkpoint.pub"] {
            try FileManager.default.copyItem(
                at: system.data.appendingPathComponent(name), to: restored.appendingPathComponent(name))
        }
        let service = try ServiceProcess(dataDirectory: restored)
        defer { service.stop() }
        #expect(try service.store().head() == head)
        let register = CommandBody(
            id: "after-restore", type: "RegisterUser", actor: "restored-agent",
            payload: [
                "userId": "restored-agent", "username": "restored", "email": "restored@example.com", "role": "AGENT",
            ])
        let replies = try System.exchange(
            [register], endpoint: service.commands, secret: try service.secret(of: ServiceProcess.Keys.service),
            context: system.context)
        #expect(replies.first?["events"]?.arrayValue?.first?["position"]?.integerValue == head + 1, "\(replies)")

        // The personal data opens through the copied key store: the borrowers rebuilt from the
        // restored store are the live store's, names and phones in clear.
        let names = "SELECT account_id, name, phone FROM accounts ORDER BY account_id"
        for data in [restored, system.data] {
            let rebuilt = try ChildProcess.strata(["rebuild", "readmodels", "--data", data.path])
            #expect(rebuilt.exitCode == 0, "\(rebuilt.stdout)\(rebuilt.stderr)")
        }
        let restoredNames = try texts(names, restored.appendingPathComponent("readmodels.rebuilt.db").path)
        #expect(restoredNames.count == system.workload.accounts)
        #expect(restoredNames == (try texts(names, system.data.appendingPathComponent("readmodels.rebuilt.db").path)))
        #expect(restoredNames.contains { $0.hasPrefix("\(system.workload.accountId(0))|Borrower 0|+91") })
    }

    /// A key the service had not destroyed yet when the copy was taken (it destroys a key just
    /// after the erasure commits, or at its next start after a crash in between) is left out:
    /// no file of the backup holds its bytes, while every other key is copied as it is.
    @Test func aBackupLeavesOutTheKeyOfASubjectItsStoreHasErased() throws {
        let system = try System("backup-erased")
        let backups = try ChildProcess.temporaryDirectory("strata-backups-erased")
        defer { try? FileManager.default.removeItem(at: backups) }
        try system.send(system.workload.setup())
        let account = system.workload.accountId(3)
        try system.send([accountErasure(account)])
        #expect(system.service.stop() == 0)

        // The key put back, as a crash between the erasure's commit and its delete leaves it.
        let keysPath = system.data.appendingPathComponent(SubjectKeyStore.fileName).path
        let planted = Array("planted key of an erased subject".utf8)
        let keys = try SQLiteConnection(path: keysPath, mode: .readWrite)
        try keys.statement("INSERT INTO subject_keys VALUES (?, ?, ?, ?)").run([
            .text("account:\(account)"), .text("account:\(account):00000000planted"), .blob(planted),
            .text("2026-11-22T00:00:00.000Z"),
        ])
        let everyKey = "SELECT subject, key_id, hex(secret) FROM subject_keys ORDER BY subject"
        let sourceKeys = try texts(everyKey, keysPath)
        keys.close()
        #expect(try filesUnder(system.data).contains { $0.bytes.contains(planted) }, "the key is in place")

        let output = backups.appendingPathComponent("b").path
        let result = try ChildProcess.strata(
            ["backup", "--data", system.data.path, "--output", output, "--format", "json"])
        #expect(result.exitCode == 0, "\(result.stdout)\(result.stderr)")
        let summary = try JSONParser.parse(result.stdout)
        #expect(summary["erasedKeysLeftOut"] == 1)
        #expect(summary["subjectKeys"]?.integerValue == Int64(sourceKeys.count - 1))
        #expect(try texts(everyKey, output + "/" + SubjectKeyStore.fileName) == sourceKeys.filter {
            !$0.hasPrefix("account:\(account)|")
        })
        let holding = try filesUnder(backups).filter { $0.bytes.contains(planted) }
        #expect(holding.isEmpty, "the erased subject's key is in \(holding.map(\.path))")
        let files = try FileManager.default.contentsOfDirectory(atPath: output).sorted()
        #expect(files == ["events.db", SubjectKeyStore.fileName])

        let text = try ChildProcess.strata(["backup", "--data", system.data.path, "--output", output + "-text"])
        #expect(text.exitCode == 0, "\(text.stderr)")
        let keysLine = "keys: \(sourceKeys.count - 1) subject keys copied; 1 of erased subjects left out\n"
        #expect(text.stdout.contains(keysLine), "\(text.stdout)")
    }

    /// Refusals: nothing is written, and nothing is left behind.
    @Test func whatABackupRefuses() throws {
        let data = try ChildProcess.temporaryDirectory("strata-backup-refused")
        defer { try? FileManager.default.removeItem(at: data) }
        let output = data.appendingPathComponent("b").path
        let none = try ChildProcess.strata(["backup", "--data", data.path, "--output", output])
        #expect(none.exitCode == 2 && none.stderr.contains("no event store at "), "\(none.stderr)")

        try ServiceProcess.prepare(data)
        let missing = try ChildProcess.strata(["backup", "--data", data.path])
        #expect(missing.exitCode == 2 && missing.stderr.contains("--output DIR"), "\(missing.stderr)")
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: false)
        let exists = try ChildProcess.strata(["backup", "--data", data.path, "--output", output + "/"])
        #expect(exists.exitCode == 2 && exists.stderr.contains("\(output) exists"), "\(exists.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: output).isEmpty)
        try FileManager.default.removeItem(atPath: output)

        // What a backup to the same DIR that was killed left (its lock gone with it) is removed
        // by the next one; a younger one may be a backup still starting, and stays.
        let stale = data.appendingPathComponent(".b.partial-AbC123").path
        let young = data.appendingPathComponent(".b.partial-XyZ789").path
        for path in [stale, young] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            try Data("half a copy".utf8).write(to: URL(fileURLWithPath: path + "/events.db"))
        }
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: stale)
        let swept = try ChildProcess.strata(["backup", "--data", data.path, "--output", output])
        #expect(swept.exitCode == 0, "\(swept.stderr)")
        #expect(!FileManager.default.fileExists(atPath: stale) && FileManager.default.fileExists(atPath: young))
        try FileManager.default.removeItem(atPath: young)
        try FileManager.default.removeItem(atPath: output)

        // A store whose chain is broken is not backed up: verify it, restore it.
        let store = try SQLiteConnection(path: data.appendingPathComponent("events.db").path, mode: .readWrite)
        try store.execute("UPDATE events SET data = replace(data, 'root', 'toor') WHERE position = 1")
        store.close()
        let broken = try ChildProcess.strata(["backup", "--data", data.path, "--output", output])
        #expect(broken.exitCode == 1, "\(broken.stdout)\(broken.stderr)")
        #expect(broken.stderr.contains("no backup written: the chain of "), "\(broken.stderr)")
        #expect(broken.stderr.contains(" is broken at position 1: "), "\(broken.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: data.path)
        #expect(!left.contains { $0.hasPrefix(".b.") || $0 == "b" }, "\(left)")
    }

    /// A key store with a damaged page (one of its index's, which no count or delete of the copy
    /// reads) is neither backed up nor restored: exit 1 naming the damage, as for `events.db`,
    /// where it was copied and called good, and a restore put it in place of the sound one.
    @Test func aDamagedKeyStoreIsNeitherBackedUpNorRestored() throws {
        let data = try ChildProcess.temporaryDirectory("strata-backup-damaged-keys")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let sound = data.appendingPathComponent("sound").path
        let made = try ChildProcess.strata(["backup", "--data", data.path, "--output", sound])
        #expect(made.exitCode == 0, "\(made.stderr)")

        let keys = data.appendingPathComponent("subject-keys.db").path
        try damageSubjectIndex(of: keys)
        let output = data.appendingPathComponent("b").path
        let backup = try ChildProcess.strata(["backup", "--data", data.path, "--output", output])
        #expect(backup.exitCode == 1, "\(backup.stdout)\(backup.stderr)")
        #expect(
            backup.stderr.contains("no backup written: \(keys) is damaged: PRAGMA quick_check: "), "\(backup.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: data.path)
        #expect(!left.contains { $0.hasPrefix(".b.") || $0 == "b" }, "\(left)")

        // The same damage in a backup's key store: the data directory stays as it was.
        try damageSubjectIndex(of: sound + "/subject-keys.db")
        let target = data.appendingPathComponent("target")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        try ServiceProcess.prepare(target)
        let before = try filesUnder(target)
        let restore = try ChildProcess.strata(["restore", "--data", target.path, "--from", sound])
        #expect(restore.exitCode == 1, "\(restore.stdout)\(restore.stderr)")
        #expect(restore.stderr.contains("nothing restored: \(sound)/subject-keys.db is damaged: "), "\(restore.stderr)")
        let after = try filesUnder(target).filter { !$0.path.hasSuffix("-lock") }
        #expect(after.map(\.path) == before.filter { !$0.path.hasSuffix("-lock") }.map(\.path))
        #expect(zip(after, before.filter { !$0.path.hasSuffix("-lock") }).allSatisfy { $0.bytes == $1.bytes })
    }

    /// A store that holds sealed personal data, without the key store beside it, is neither backed
    /// up nor restored: `serve` refuses to start on such a pair. The backup was written as one with
    /// "nothing personal sealed", and the restore moved the data directory's key store aside, put
    /// none in its place, and said to start the system, which then refused.
    @Test func sealedPersonalDataIsNeitherBackedUpNorRestoredWithoutItsKeyStore() throws {
        let data = try ChildProcess.temporaryDirectory("strata-backup-no-keys")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let whole = data.appendingPathComponent("whole").path
        let made = try ChildProcess.strata(["backup", "--data", data.path, "--output", whole])
        #expect(made.exitCode == 0, "\(made.stderr)")

        let target = data.appendingPathComponent("target")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        try FileManager.default.moveItem(
            at: data.appendingPathComponent("subject-keys.db"), to: target.appendingPathComponent("kept-keys.db"))
        let output = data.appendingPathComponent("b").path
        let backup = try ChildProcess.strata(["backup", "--data", data.path, "--output", output])
        #expect(backup.exitCode == 2, "\(backup.stdout)\(backup.stderr)")
        #expect(backup.stderr.contains("no backup written: "), "\(backup.stderr)")
        #expect(backup.stderr.contains("subject-keys.db is missing, but "), "\(backup.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: data.path)
        #expect(!left.contains { $0.hasPrefix(".b.") || $0 == "b" }, "\(left)")

        try FileManager.default.removeItem(atPath: target.appendingPathComponent("kept-keys.db").path)
        try FileManager.default.removeItem(atPath: whole + "/subject-keys.db")
        try ServiceProcess.prepare(target)
        let before = try filesUnder(target)
        let restore = try ChildProcess.strata(["restore", "--data", target.path, "--from", whole])
        #expect(restore.exitCode == 2, "\(restore.stdout)\(restore.stderr)")
        #expect(restore.stderr.contains("nothing restored: "), "\(restore.stderr)")
        #expect(restore.stderr.contains("subject-keys.db is missing, but "), "\(restore.stderr)")
        let after = try filesUnder(target).filter { !$0.path.hasSuffix("-lock") }
        #expect(after.map(\.path) == before.filter { !$0.path.hasSuffix("-lock") }.map(\.path))
        #expect(zip(after, before.filter { !$0.path.hasSuffix("-lock") }).allSatisfy { $0.bytes == $1.bytes })
    }

    /// Overwrites the root page of the key store's index on `subject` (past the page's first
    /// 100 bytes, which on page 1 would be the file's header).
    private func damageSubjectIndex(of path: String) throws {
        let c = try SQLiteConnection(path: path, mode: .readOnly)
        let pageSize = try #require(try c.scalarInteger("PRAGMA page_size"))
        let page = try #require(
            try c.scalarInteger("SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_subject_keys_1'"))
        c.close()
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64((page - 1) * pageSize + 100))
        handle.write(Data(repeating: 0xA5, count: Int(pageSize) - 100))
        try handle.close()
    }

    private func permissions(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    private func texts(_ sql: String, _ path: String) throws -> [String] {
        let c = try SQLiteConnection(path: path, mode: .readOnly)
        defer { c.close() }
        let s = try c.statement(sql)
        var rows: [String] = []
        while try s.step() { rows.append((0..<3).map { s.isNull($0) ? "" : s.text($0) }.joined(separator: "|")) }
        return rows
    }
}
