import CommandService
import Domain
import EventStore
import Events
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import SubjectKeys
import Testing

// The writer with a sealer, as `strata serve` runs it: personal data stored sealed, each
// subject's key stored before its events, keys destroyed after their erasure is committed.

private let clock = FixedClock()

/// A data directory's store and key store.
private struct Files {
    let directory: URL
    var storePath: String { directory.appendingPathComponent("events.db").path }
    var keysPath: String { SubjectKeyStore.path(inDataDirectory: directory.path) }

    init() throws {
        directory = try ChildProcess.temporaryDirectory("writer-sealing")
    }

    func sealer() throws -> PersonalDataSealer {
        try PersonalDataSealer(store: SubjectKeyStore(writingAt: keysPath))
    }

    /// The event store, made and given its first admin.
    func bootstrappedStore() throws -> SQLiteEventStore {
        let store = try SQLiteEventStore(path: storePath, clock: clock)
        try bootstrap(store)
        return store
    }
}

private let signUp = [
    pending(
        "s1", actor: "agent-7",
        .registerUser(RegisterUser(userId: "agent-7", username: "ravi", email: "ravi@example.com", role: .agent))),
    pending("s2", actor: "admin-1", .approveAgent(ApproveAgent(agentId: "agent-7"))),
    pending(
        "s3", actor: "agent-7",
        .openAccount(
            OpenAccount(
                accountId: "A1", name: "Lakshmi Narayan", phone: "+919845012345", email: "lakshmi@example.com",
                address: "4 Temple Street, Mysuru", assignedAgentId: "agent-7"))),
]

private func accepted(_ reply: CommandReply) -> Bool {
    if case .accepted = reply { return true }
    return false
}

private func reason(_ reply: CommandReply) -> String? {
    if case .refused(_, _, let error) = reply { return error.reason }
    return nil
}

@Suite("Command writer: sealing personal data")
struct CommandWriterSealingTests {
    @Test func personalDataIsStoredSealedUnderKeysStoredFirst() throws {
        let files = try Files()
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let store = try files.bootstrappedStore()
        let writer = try CommandWriter(store: store, clock: clock, sealer: try files.sealer())
        let committed = writer.process(signUp)
        #expect(committed.replies.allSatisfy { accepted($0.reply) })
        for event in committed.events {
            let text = String(decoding: event.data, as: UTF8.self)
            for clear in ["ravi@example.com", "Lakshmi", "+919845012345", "lakshmi@", "Temple"] { #expect(!text.contains(clear)) }
        }
        #expect(
            try SubjectKeyStore(readingAt: files.keysPath).subjects()
                == [DataSubject(.account, "A1"), DataSubject(.user, "agent-7")])
        // What was published is what was stored, and it opens to what was decided.
        #expect(committed.events == (try store.events(after: 1, limit: 10)))
        let opener = PersonalDataOpener(keyStorePath: files.keysPath)
        let opened = try committed.events[2].decoded().openingPersonalData(stream: "account-A1", with: opener)
        #expect(
            opened
                == .accountOpened(
                    AccountOpened(
                        accountId: "A1", name: "Lakshmi Narayan", phone: "+919845012345", email: "lakshmi@example.com",
                        address: "4 Temple Street, Mysuru", assignedAgentId: "agent-7", openedBy: "agent-7", status: .active)))
    }

    @Test func keysAreStoredBeforeTheAppendIsTried() throws {
        let files = try Files()
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let store = try files.bootstrappedStore()
        let full = UnreliableStore(store, failingAppendsWith: StoreError(.full, "disk full"))
        let failing = try CommandWriter(store: full, clock: clock, sealer: try files.sealer())
        let refused = failing.process(signUp)
        #expect(refused.failure?.kind == .full)
        #expect(try store.head() == 1)
        // The keys are there (an orphan key is harmless); a retry reuses them.
        let orphans = try SubjectKeyStore(readingAt: files.keysPath)
        let key = try #require(try orphans.key(of: DataSubject(.account, "A1")))
        let writer = try CommandWriter(store: store, clock: clock, sealer: try files.sealer())
        #expect(writer.process(signUp).replies.allSatisfy { accepted($0.reply) })
        let stored = try store.events(after: 3, limit: 1)[0]
        #expect(String(decoding: stored.data, as: UTF8.self).contains("\"pd1.\(key.id)."))
    }

    @Test func anErasureDestroysTheKeyOnceItIsCommitted() throws {
        let files = try Files()
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let store = try files.bootstrappedStore()
        let writer = try CommandWriter(store: store, clock: clock, sealer: try files.sealer())
        _ = writer.process(signUp)
        let keys = try SubjectKeyStore(readingAt: files.keysPath)
        #expect(try keys.key(of: DataSubject(.account, "A1")) != nil)
        let erasure = writer.process([
            pending("e1", actor: "admin-1", .eraseSubject(EraseSubject(subjectId: "A1", reason: "asked to"))),
            pending("e2", actor: "admin-1", .eraseSubject(EraseSubject(subjectId: "A1", reason: "again"))),
            pending(
                "e3", actor: "agent-7",
                .updateAccount(UpdateAccount(accountId: "A1", name: "Lakshmi N"))),
        ])
        #expect(erasure.erasureFailure == nil)
        #expect(accepted(erasure.replies[0].reply))
        #expect(reason(erasure.replies[1].reply) == "ALREADY_ERASED")
        #expect(reason(erasure.replies[2].reply) == "SUBJECT_ERASED")
        #expect(try keys.key(of: DataSubject(.account, "A1")) == nil)
        #expect(try keys.key(of: DataSubject(.user, "agent-7")) != nil)
        let opened = try store.events(after: 3, limit: 1)[0].decoded()
            .openingPersonalData(stream: "account-A1", with: PersonalDataOpener(keyStorePath: files.keysPath))
        guard case .accountOpened(let account) = opened else {
            Issue.record("not an AccountOpened: \(opened)")
            return
        }
        #expect([account.name, account.phone, account.address, account.email] == [.erased, .erased, .erased, .erased])
        #expect(account.accountId == "A1" && account.assignedAgentId == "agent-7")
        #expect(try store.verify().isIntact)
    }

    /// The key store refuses the erasure's delete (another writer holds it past the wait), then
    /// lets it: the erasure, committed and answered, is finished while the service runs, on
    /// the writer's next turn, not only at the next start. Then the delete goes through but a
    /// reader keeps the log from being truncated: the key's bytes leave the log at the next try.
    @Test(arguments: [false, true])
    func anErasureWhoseKeyTheKeyStoreKeptIsFinishedOnALaterTurn(readerHoldsTheLog: Bool) throws {
        let files = try Files()
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let store = try files.bootstrappedStore()
        let writer = try CommandWriter(store: store, clock: clock, sealer: try files.sealer())
        _ = writer.process(signUp)
        let subject = DataSubject(.account, "A1")
        let keys = try SubjectKeyStore(readingAt: files.keysPath)
        let secret = try #require(try keys.key(of: subject)).secret
        let holder = try SQLiteConnection(path: files.keysPath, mode: .readWrite)
        if readerHoldsTheLog {
            try holder.execute("BEGIN")
            _ = try holder.scalarInteger("SELECT count(*) FROM subject_keys")
        } else {
            try holder.execute("BEGIN IMMEDIATE")
        }
        let erasure = writer.process([
            pending("e1", actor: "admin-1", .eraseSubject(EraseSubject(subjectId: "A1", reason: "asked to")))
        ])
        #expect(accepted(erasure.replies[0].reply), "the erasure is committed: \(erasure.replies)")
        #expect(erasure.erasureFailure != nil)
        #expect(writer.owesErasures)
        #expect(writer.finishErasures().isEmpty, "still held: nothing finished")
        try holder.execute("COMMIT")
        #expect(writer.finishErasures() == [subject])
        #expect(!writer.owesErasures)
        #expect(try keys.key(of: subject) == nil)
        for file in [files.keysPath, files.keysPath + "-wal"] {
            let bytes = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data())
            let found = bytes.contains(secret)  // not in the expectation, which would print every byte
            #expect(!found, "the destroyed key's bytes are still in \(file)")
        }
    }

    /// A writer that starts while a reader keeps the key store's WAL from being truncated
    /// starts and decides as ever (its start destroys every erased subject's key again, which
    /// must not trip on the truncation it owes), and truncates once the reader lets it.
    @Test func aWriterStartsWhileTheKeyStoreOwesATruncation() throws {
        let files = try Files()
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let store = try files.bootstrappedStore()
        let first = try CommandWriter(store: store, clock: clock, sealer: try files.sealer())
        _ = first.process(signUp)
        let reader = try SQLiteConnection(path: files.keysPath, mode: .readOnly)
        try reader.execute("BEGIN")
        _ = try reader.scalarInteger("SELECT count(*) FROM subject_keys")
        let erasure = first.process([
            pending("e1", actor: "admin-1", .eraseSubject(EraseSubject(subjectId: "A1", reason: "asked to")))
        ])
        #expect(erasure.erasureFailure != nil, "the reader holds the truncation back")

        let restarted = try CommandWriter(store: store, clock: clock, sealer: try files.sealer())
        #expect(restarted.owesErasures, "the truncation is owed")
        let replies = restarted.process([
            pending(
                "r1", actor: "agent-8",
                .registerUser(RegisterUser(userId: "agent-8", username: "kiran", email: "kiran@example.com", role: .agent)))
        ]).replies
        #expect(replies.allSatisfy { accepted($0.reply) }, "\(replies)")
        try reader.execute("COMMIT")
        #expect(restarted.finishErasures().isEmpty, "no subject was waiting: only the truncation")
        #expect(!restarted.owesErasures)
        let log = (try? FileManager.default.attributesOfItem(atPath: files.keysPath + "-wal"))?[.size] as? Int
        #expect(log == 0, "the key store's WAL is truncated")
    }

    /// A crash after the erasure's commit and before its key was destroyed: the next start
    /// finishes the erasure.
    @Test func aKeyAnInterruptedErasureLeftIsDestroyedAtStart() throws {
        let files = try Files()
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let store = try files.bootstrappedStore()
        _ = try CommandWriter(store: store, clock: clock, sealer: try files.sealer()).process(signUp)
        let event = PersonalDataErased(subjectId: "agent-7", kind: .user, erasedBy: "admin-1", reason: "asked to")
        _ = try store.append(
            CommandWrite(
                commandId: "e1", bodyDigest: HashChain.sha256([]), actor: "admin-1", commandType: "EraseSubject",
                decision: .append([try NewEvent(stream: StreamName("user-agent-7")!, event: event)], expectations: [:])))
        #expect(try SubjectKeyStore(readingAt: files.keysPath).key(of: DataSubject(.user, "agent-7")) != nil)
        _ = try CommandWriter(store: store, clock: clock, sealer: try files.sealer())
        #expect(try SubjectKeyStore(readingAt: files.keysPath).key(of: DataSubject(.user, "agent-7")) == nil)
        #expect(try SubjectKeyStore(readingAt: files.keysPath).key(of: DataSubject(.account, "A1")) != nil)
    }

    /// The directory is folded from sealed emails at start: uniqueness holds across restarts,
    /// checked on the keyed digest.
    @Test func emailsStayUniqueWhenTheWriterStartsAgain() throws {
        let files = try Files()
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let store = try files.bootstrappedStore()
        _ = try CommandWriter(store: store, clock: clock, sealer: try files.sealer()).process(signUp)
        let restarted = try CommandWriter(store: store, clock: clock, sealer: try files.sealer())
        func register(_ id: String, _ user: String, _ username: String, _ email: String) -> CommandWriter.Pending {
            pending(id, actor: user, .registerUser(RegisterUser(userId: user, username: username, email: PersonalData(email), role: .agent)))
        }
        let replies = restarted.process([
            register("r1", "agent-8", "ravi2", "RAVI@example.com"),
            register("r2", "agent-9", "xnine", "root@example.com"),
            register("r3", "agent-9", "xnine", "x9@example.com"),
        ]).replies
        #expect(replies.map { reason($0.reply) } == ["EMAIL_TAKEN", "EMAIL_TAKEN", nil])
    }

    /// An accented email is one address however its accent is typed, precomposed or as a
    /// combining mark: the keyed digest is of bytes, which differ, so both forms are taken to
    /// one before it, as decided and when the writer starts again.
    @Test func anAccentTypedEitherWayIsOneEmail() throws {
        let files = try Files()
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let store = try files.bootstrappedStore()
        func register(_ id: String, _ user: String, _ email: String) -> CommandWriter.Pending {
            pending(
                id, actor: user,
                .registerUser(RegisterUser(userId: user, username: user, email: PersonalData(email), role: .agent)))
        }
        let writer = try CommandWriter(store: store, clock: clock, sealer: try files.sealer())
        let first = writer.process([
            register("n1", "agent-7", "jos\u{E9}@example.com"), register("n2", "agent-8", "Jose\u{301}@example.com"),
        ])
        #expect(first.replies.map { reason($0.reply) } == [nil, "EMAIL_TAKEN"])
        let restarted = try CommandWriter(store: store, clock: clock, sealer: try files.sealer())
        #expect(
            restarted.process([register("n3", "agent-9", "JOSE\u{301}@EXAMPLE.COM")]).replies.map { reason($0.reply) }
                == ["EMAIL_TAKEN"])
    }

    /// An email may begin as the sealed form does (`pd1.`): it is clear all the same, and as
    /// taken as any other, both as decided and when the writer starts again.
    @Test func anEmailThatBeginsLikeASealedValueIsTakenToo() throws {
        let files = try Files()
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let store = try files.bootstrappedStore()
        func register(_ id: String, _ user: String, _ username: String) -> CommandWriter.Pending {
            pending(
                id, actor: user,
                .registerUser(
                    RegisterUser(userId: user, username: username, email: "pd1.ravi@example.com", role: .agent)))
        }
        let writer = try CommandWriter(store: store, clock: clock, sealer: try files.sealer())
        #expect(writer.process([register("p1", "agent-7", "ravi")]).replies.map { reason($0.reply) } == [nil])
        #expect(
            writer.process([register("p2", "agent-8", "ravi8")]).replies.map { reason($0.reply) } == ["EMAIL_TAKEN"])
        let restarted = try CommandWriter(store: store, clock: clock, sealer: try files.sealer())
        #expect(
            restarted.process([register("p3", "agent-9", "ravi9")]).replies.map { reason($0.reply) } == ["EMAIL_TAKEN"])
    }
}
