import EventStore
import Events
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import SubjectKeys
import Testing

/// `strata restore --from DIR`: a backup put in place of the store and the key store, checked
/// first, refused while a process holds the data directory, with what it replaces moved aside
/// and the projection files kept where they are a view of the restored store (docs/cli.md).
@Suite struct RestoreTests {
    /// The backup taken, the store goes on; then restored: the service continues after the
    /// backup's head, the personal data opens, the audit log (a view of the restored store)
    /// is kept and resumes, the read models (ahead of it) are moved aside and rebuilt.
    @Test func aRestoredStoreIsServedFromItsHeadWithTheProjectionsThatFitIt() throws {
        let system = try System("restore")
        try system.send(system.workload.setup())
        try system.send((0..<10).flatMap { system.workload.loan($0) })
        let audit = try system.projector("audit")
        try system.waitForCheckpoint("audit", try system.service.store().head())
        #expect(audit.stop() == 0, "\(audit.log)")
        let auditCheckpoint = try system.checkpoint("audit")

        let backup = try system.backUpStore()
        defer { try? FileManager.default.removeItem(at: backup) }
        let backupHead = try SQLiteEventStore(readingAt: backup.appendingPathComponent("events.db").path).head()
        #expect(backupHead == auditCheckpoint)
        try system.send((10..<20).flatMap { system.workload.loan($0) })
        let readModels = try system.projector("readmodels")
        let laterHead = try system.service.store().head()
        try system.waitForCheckpoint("readmodels", laterHead)
        #expect(laterHead > backupHead)

        // Refused while serve, or a projector, holds the data directory: nothing changes.
        let restore = ["restore", "--from", backup.path, "--data", system.data.path]
        let whileServing = try ChildProcess.strata(restore)
        #expect(whileServing.exitCode == 2, "\(whileServing.stdout)\(whileServing.stderr)")
        #expect(whileServing.stderr.contains("nothing restored: another process"), "\(whileServing.stderr)")
        #expect(whileServing.stderr.contains("strata serve or strata up?"), "\(whileServing.stderr)")
        system.service.stop()
        let whileProjecting = try ChildProcess.strata(restore)
        #expect(whileProjecting.exitCode == 2, "\(whileProjecting.stderr)")
        #expect(whileProjecting.stderr.contains("strata project readmodels?"), "\(whileProjecting.stderr)")
        #expect(readModels.stop() == 0, "\(readModels.log)")
        #expect(try SQLiteEventStore(readingAt: system.storePath).head() == laterHead)

        let result = try ChildProcess.strata(restore + ["--format", "json"])
        #expect(result.exitCode == 0, "\(result.stdout)\(result.stderr)")
        let summary = try JSONParser.parse(result.stdout)
        #expect(summary["head"]?.integerValue == backupHead)
        #expect(summary["files"] == ["events.db", "subject-keys.db"])
        #expect(summary["projectionsKept"] == ["audit.db": .integer(auditCheckpoint)])
        let aside = try #require(summary["movedAside"]?.stringValue)
        let replaced = (summary["replaced"]?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(["events.db", "subject-keys.db", "readmodels.db"].allSatisfy(replaced.contains), "\(replaced)")
        #expect(!replaced.contains { $0.hasPrefix("audit.db") }, "\(replaced)")
        // Nothing deleted: the replaced store is whole beside it, at its own head.
        #expect(try SQLiteEventStore(readingAt: aside + "/events.db").head() == laterHead)
        #expect(FileManager.default.fileExists(atPath: aside + "/readmodels.db"))
        let left = try FileManager.default.contentsOfDirectory(atPath: system.data.path)
        #expect(!left.contains("readmodels.db") && left.contains("audit.db"), "\(left)")
        #expect(!left.contains { $0.hasPrefix(".restore.partial") }, "\(left)")

        try system.restartService()
        #expect(try system.service.store().head() == backupHead)
        try system.send((20..<22).flatMap { system.workload.loan($0) })
        let newHead = try system.service.store().head()
        #expect(newHead > backupHead)
        for name in ["readmodels", "audit"] {
            let projector = try system.projector(name)
            try system.waitForCheckpoint(name, newHead)
            #expect(projector.stop() == 0, "\(projector.log)")
            try system.expectEqualToRebuild(name)
        }
        print("restore: backup head \(backupHead) restored over head \(laterHead); served on to \(newHead)")
        // The borrowers' names open through the restored key store.
        let names = try SQLiteConnection(
            path: system.data.appendingPathComponent("readmodels.db").path, mode: .readOnly)
        #expect(try names.scalarInteger("SELECT count(*) FROM accounts WHERE name LIKE 'Borrower %'")
            == Int64(system.workload.accounts))
    }

    /// An erasure made after the backup was taken is not undone by restoring it: the restore
    /// records it again (an operator act, correlated with the erasure it repeats) and destroys
    /// the key the backup brought back, so that no file of the data directory holds the key, the
    /// borrower's name reads `[erased]`, and the service knows the subject erased.
    @Test func anErasureMadeAfterTheBackupIsRecordedAgainByTheRestore() throws {
        let system = try System("restore-erased")
        try system.send(system.workload.setup())
        let backup = try system.backUpStore()
        defer { try? FileManager.default.removeItem(at: backup) }
        let backupHead = try SQLiteEventStore(readingAt: backup.appendingPathComponent("events.db").path).head()
        let account = system.workload.accountId(3)
        let key = try #require(
            try SubjectKeyStore(readingAt: backup.appendingPathComponent(SubjectKeyStore.fileName).path)
                .key(of: DataSubject(.account, account)))
        try system.send([accountErasure(account)])
        #expect(system.service.stop() == 0)

        let result = try ChildProcess.strata(
            ["restore", "--from", backup.path, "--data", system.data.path, "--format", "json"])
        #expect(result.exitCode == 0, "\(result.stdout)\(result.stderr)")
        let summary = try JSONParser.parse(result.stdout)
        #expect(summary["head"]?.integerValue == backupHead)
        #expect(summary["restoredHead"]?.integerValue == backupHead + 1)
        #expect(
            summary["erasuresRecordedAgain"]
                == .array([["position": .integer(backupHead + 1), "subject": .string("account:\(account)")]]))
        #expect(summary["erasuresWarning"] == .null)
        let holding = try filesUnder(system.data).filter { $0.bytes.contains(key.secret) }
        #expect(holding.isEmpty, "the erased subject's key is in \(holding.map(\.path))")

        let restored = try SQLiteEventStore(readingAt: system.storePath)
        let again = try #require(try restored.events(after: backupHead, limit: 10).first)
        #expect(again.type == "PersonalDataErased" && again.stream == "account-\(account)")
        let metadata = try again.decodedMetadata()
        #expect(metadata.actor == "operator" && metadata.correlationId == "erase-\(account)", "\(metadata)")
        #expect(try restored.verify().isIntact)

        try system.restartService()
        let secret = try system.service.secret(of: ServiceProcess.Keys.service)
        let replies = try System.exchange(
            [accountErasure(account, id: "erase-again-\(account)", reason: "asked again")],
            endpoint: system.service.commands, secret: secret, context: system.context)
        expectRefusal(replies[0], "REJECTED", "ALREADY_ERASED", id: "erase-again-\(account)")
        let readModels = try system.projector("readmodels")
        try system.waitForCheckpoint("readmodels", try system.service.store().head())
        #expect(readModels.stop() == 0, "\(readModels.log)")
        let names = try SQLiteConnection(
            path: system.data.appendingPathComponent("readmodels.db").path, mode: .readOnly)
        let name = try names.statement("SELECT name FROM accounts WHERE account_id = ?")
        try name.bind(.text(account), at: 1)
        #expect(try name.step() && name.text(0) == "[erased]")
        name.reset()
        names.close()

        // Said in words too, by a restore of the same backup over the store it made.
        #expect(system.service.stop() == 0)
        let text = try ChildProcess.strata(["restore", "--from", backup.path, "--data", system.data.path])
        #expect(text.exitCode == 0, "\(text.stdout)\(text.stderr)")
        #expect(
            text.stdout.contains(
                "erasures made after the backup, recorded again at positions \(backupHead + 1)–\(backupHead + 1), "
                    + "their keys destroyed: account:\(account)\n"), "\(text.stdout)")
        #expect(text.stdout.contains("serve continues after position \(backupHead + 1)\n"), "\(text.stdout)")
    }

    /// An erasure that commits while a backup runs, between its copy of the store and its copy
    /// of the keys, leaves a backup with the subject's events and without its key. Restored under
    /// a projection that had not applied the erasure, and is kept, the erasure is recorded again
    /// all the same: the borrower's name, which that projection held in clear, reads `[erased]`.
    /// It was recorded only for subjects whose key the backup had, and the name stayed.
    @Test func anErasureCommittedWhileTheBackupRanIsRecordedAgain() throws {
        let system = try System("restore-racing")
        try system.send(system.workload.setup())
        let readModels = try system.projector("readmodels")
        let backupHead = try system.service.store().head()
        try system.waitForCheckpoint("readmodels", backupHead)
        #expect(readModels.stop() == 0, "\(readModels.log)")
        let account = system.workload.accountId(3)
        let backup = try system.backUpStore()
        defer { try? FileManager.default.removeItem(at: backup) }
        try system.send([accountErasure(account)])
        // The key store as the backup copies it once the erasure has destroyed the key.
        let keysAfter = try system.backUpStore()
        defer { try? FileManager.default.removeItem(at: keysAfter) }
        let keysPath = backup.appendingPathComponent(SubjectKeyStore.fileName).path
        try FileManager.default.removeItem(atPath: keysPath)
        try FileManager.default.copyItem(
            atPath: keysAfter.appendingPathComponent(SubjectKeyStore.fileName).path, toPath: keysPath)
        #expect(try SubjectKeyStore(readingAt: keysPath).key(of: DataSubject(.account, account)) == nil)
        #expect(system.service.stop() == 0)

        let result = try ChildProcess.strata(
            ["restore", "--from", backup.path, "--data", system.data.path, "--format", "json"])
        #expect(result.exitCode == 0, "\(result.stdout)\(result.stderr)")
        let summary = try JSONParser.parse(result.stdout)
        #expect(summary["projectionsKept"] == ["readmodels.db": .integer(backupHead)], "\(summary)")
        #expect(
            summary["erasuresRecordedAgain"]
                == .array([["position": .integer(backupHead + 1), "subject": .string("account:\(account)")]]),
            "\(summary)")

        try system.restartService()
        let caughtUp = try system.projector("readmodels")
        try system.waitForCheckpoint("readmodels", backupHead + 1)
        #expect(caughtUp.stop() == 0, "\(caughtUp.log)")
        let names = try SQLiteConnection(
            path: system.data.appendingPathComponent("readmodels.db").path, mode: .readOnly)
        defer { names.close() }
        let name = try names.statement("SELECT name FROM accounts WHERE account_id = ?")
        try name.bind(.text(account), at: 1)
        #expect(try name.step() && name.text(0) == "[erased]")
        name.reset()
        try system.expectEqualToRebuild("readmodels")
    }

    /// A backup restored over another history (another deployment's data directory, whose
    /// subjects share ids with the backup's): its erasures are of other people, so none is
    /// recorded again, and the restore says so in a warning.
    @Test func theErasuresOfAnotherHistoryAreNotRecordedAgain() throws {
        let source = try System("restore-other")
        try source.send(source.workload.setup())
        let backup = try source.backUpStore()
        defer { try? FileManager.default.removeItem(at: backup) }
        #expect(source.service.stop() == 0)
        let backupHead = try SQLiteEventStore(readingAt: backup.appendingPathComponent("events.db").path).head()

        let other = try System("restore-other")
        try other.send(other.workload.setup())
        let account = other.workload.accountId(3)
        try other.send([accountErasure(account)])
        #expect(try other.service.store().head() == backupHead + 1)
        #expect(other.service.stop() == 0)

        let result = try ChildProcess.strata(
            ["restore", "--from", backup.path, "--data", other.data.path, "--format", "json"])
        #expect(result.exitCode == 0, "\(result.stdout)\(result.stderr)")
        let summary = try JSONParser.parse(result.stdout)
        #expect(summary["erasuresRecordedAgain"] == [])
        #expect(summary["restoredHead"]?.integerValue == backupHead)
        let warning = summary["erasuresWarning"]?.stringValue ?? ""
        #expect(warning.contains("another event at position \(backupHead) than the backup"), "\(summary)")
        let keys = try SubjectKeyStore(readingAt: other.data.appendingPathComponent(SubjectKeyStore.fileName).path)
        #expect(try keys.key(of: DataSubject(.account, account)) != nil)
    }

    /// An older backup restored by mistake, a subject erased on it, then the newer backup restored
    /// over that: the store it replaces is shorter than the backup and another history from the
    /// older backup's head on, so its erasure is not recorded again, and the restore says so, as
    /// for a longer store of another history. It said nothing, and the erased subject's personal
    /// data was back in clear with no word to erase it again.
    @Test func aShorterStoreOfAnotherHistoryIsWarnedAbout() throws {
        let system = try System("restore-shorter")
        try system.send(system.workload.setup())
        let older = try system.backUpStore()
        defer { try? FileManager.default.removeItem(at: older) }
        let olderHead = try SQLiteEventStore(readingAt: older.appendingPathComponent("events.db").path).head()
        try system.send((0..<5).flatMap { system.workload.loan($0) })
        let newer = try system.backUpStore()
        defer { try? FileManager.default.removeItem(at: newer) }
        let newerHead = try SQLiteEventStore(readingAt: newer.appendingPathComponent("events.db").path).head()
        #expect(system.service.stop() == 0)

        let mistaken = try ChildProcess.strata(["restore", "--from", older.path, "--data", system.data.path])
        #expect(mistaken.exitCode == 0, "\(mistaken.stdout)\(mistaken.stderr)")
        try system.restartService()
        let account = system.workload.accountId(3)
        try system.send([accountErasure(account)])
        let erasedHead = try system.service.store().head()
        #expect(erasedHead == olderHead + 1 && erasedHead < newerHead)
        #expect(system.service.stop() == 0)

        let result = try ChildProcess.strata(
            ["restore", "--from", newer.path, "--data", system.data.path, "--format", "json"])
        #expect(result.exitCode == 0, "\(result.stdout)\(result.stderr)")
        let summary = try JSONParser.parse(result.stdout)
        #expect(summary["erasuresRecordedAgain"] == [])
        #expect(summary["restoredHead"]?.integerValue == newerHead)
        let warning = summary["erasuresWarning"]?.stringValue ?? ""
        #expect(warning.contains("another event at position \(erasedHead) than the backup"), "\(summary)")
    }

    /// On a new machine the data directory may not exist yet: the restore makes it, as `serve`
    /// would, for its owner alone, since it holds the key store that opens every personal field.
    @Test func aDataDirectoryTheRestoreMakesIsItsOwnersAlone() throws {
        let data = try ChildProcess.temporaryDirectory("strata-restore-source")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let machine = try ChildProcess.temporaryDirectory("strata-restore-machine")
        defer { try? FileManager.default.removeItem(at: machine) }
        let backup = machine.appendingPathComponent("backup").path
        let made = try ChildProcess.strata(["backup", "--data", data.path, "--output", backup])
        #expect(made.exitCode == 0, "\(made.stderr)")

        let fresh = machine.appendingPathComponent("data").path
        let restored = try ChildProcess.strata(["restore", "--data", fresh, "--from", backup])
        #expect(restored.exitCode == 0, "\(restored.stdout)\(restored.stderr)")
        let attributes = try FileManager.default.attributesOfItem(atPath: fresh)
        let mode = try #require(attributes[.posixPermissions] as? NSNumber).intValue & 0o777
        #expect(mode == 0o700, "the data directory has mode \(String(mode, radix: 8))")
        #expect(FileManager.default.fileExists(atPath: fresh + "/subject-keys.db"))
    }

    /// A backup that is damaged or whose chain is broken, or none at all: refused, and the data
    /// directory is exactly as it was.
    @Test func whatARestoreRefusesLeavesTheDataDirectoryAsItWas() throws {
        let data = try ChildProcess.temporaryDirectory("strata-restore-refused")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let backups = try ChildProcess.temporaryDirectory("strata-restore-backups")
        defer { try? FileManager.default.removeItem(at: backups) }
        let backup = backups.appendingPathComponent("b").path
        let made = try ChildProcess.strata(["backup", "--data", data.path, "--output", backup])
        #expect(made.exitCode == 0, "\(made.stderr)")
        let before = try filesUnder(data)

        let none = try ChildProcess.strata(["restore", "--data", data.path])
        #expect(none.exitCode == 2 && none.stderr.contains("--from DIR"), "\(none.stderr)")
        let empty = try ChildProcess.strata(["restore", "--data", data.path, "--from", backups.path])
        #expect(empty.exitCode == 2 && empty.stderr.contains("no backup at \(backups.path)"), "\(empty.stderr)")

        let store = try SQLiteConnection(path: backup + "/events.db", mode: .readWrite)
        try store.execute("UPDATE events SET data = replace(data, 'root', 'toor') WHERE position = 1")
        store.close()
        let broken = try ChildProcess.strata(["restore", "--data", data.path, "--from", backup])
        #expect(broken.exitCode == 1, "\(broken.stdout)\(broken.stderr)")
        #expect(broken.stderr.contains("nothing restored: the chain of \(backup)/events.db is broken at position 1"))

        // A page of the events table overwritten.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: backup + "/events.db"))
        let pageSize = try #require(
            try SQLiteConnection(path: backup + "/events.db", mode: .readOnly).scalarInteger("PRAGMA page_size"))
        try handle.seek(toOffset: UInt64(pageSize))
        handle.write(Data(repeating: 0xA5, count: Int(pageSize)))
        try handle.close()
        let damaged = try ChildProcess.strata(["restore", "--data", data.path, "--from", backup])
        #expect(damaged.exitCode == 1, "\(damaged.stdout)\(damaged.stderr)")
        #expect(damaged.stderr.contains("nothing restored: "), "\(damaged.stderr)")

        // Every file as it was (the locks a restore takes aside), and nothing added.
        let after = try filesUnder(data).filter { !$0.path.hasSuffix("-lock") }
        #expect(after.map(\.path) == before.filter { !$0.path.hasSuffix("-lock") }.map(\.path))
        #expect(zip(after, before.filter { !$0.path.hasSuffix("-lock") }).allSatisfy { $0.bytes == $1.bytes })
    }
}
