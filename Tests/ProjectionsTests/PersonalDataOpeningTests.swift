import Events
import Foundation
import ProjectorRuntime
import Projections
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

/// An opener with a fixed table of sealed values (the key store's part is tested with it):
/// what is in the table opens, a value of a subject in `erased` reads `[erased]`, and
/// anything else does not open.
private struct TableOpener: PersonalDataOpening {
    let clear: [String: String]
    let erased: Set<String>

    func open(_ sealed: PersonalData, stream: String) throws(PersonalDataError) -> PersonalData {
        if let text = clear[sealed.value] { return PersonalData(text) }
        if erased.contains(where: { sealed.value.hasPrefix("pd1.\($0):") }) { return .erased }
        throw PersonalDataError("\(sealed.value) does not open")
    }
}

/// An opener whose key store cannot be read.
private struct KeyStoreOutOfReach: PersonalDataOpening {
    func open(_ sealed: PersonalData, stream: String) throws(PersonalDataError) -> PersonalData {
        throw PersonalDataError("cannot open personal data: there is no key store at /keys.db", kind: .keyStore)
    }
}

private func opened(_ id: String, name: String, phone: String, address: String = "pd1.account:A1:k.address") -> StrataEvent {
    .accountOpened(
        AccountOpened(
            accountId: id, name: PersonalData(name), phone: PersonalData(phone), address: PersonalData(address),
            assignedAgentId: "agent-1", openedBy: "agent-1", status: .active))
}

/// The bytes of the projection file at `path` followed by those of its WAL (none when absent).
private func fileAndLog(_ path: String) -> [UInt8] {
    ["", "-wal"].flatMap { suffix in (try? Array(Data(contentsOf: URL(fileURLWithPath: path + suffix)))) ?? [] }
}

@Suite struct PersonalDataOpeningTests {
    private let opener = TableOpener(
        clear: [
            "pd1.account:A1:k.name": "Asha Rao", "pd1.account:A1:k.phone": "+919845012345",
            "pd1.account:A1:k.address": "Mysuru",
        ],
        erased: ["account:A2"])

    @Test func projectionsSeeOpenedValuesAndErasedOnes() throws {
        let h = try ProjectionHarness([Accounts()], opener: opener)
        try h.given(opened("A1", name: "pd1.account:A1:k.name", phone: "pd1.account:A1:k.phone"), stream: "account-A1")
        try h.given(
            opened("A2", name: "pd1.account:A2:k.name", phone: "pd1.account:A2:k.phone", address: "pd1.account:A2:k.a"),
            stream: "account-A2")
        // A store written before sealing: clear values pass as they are.
        try h.given(opened("A3", name: "Ravi Kumar", phone: "+919845099999", address: "Hassan"), stream: "account-A3")
        #expect(h.database.stop == nil)
        #expect(
            try h.rows("SELECT account_id, name, phone, address FROM accounts ORDER BY account_id")
                == [
                    ["A1", "Asha Rao", "+919845012345", "Mysuru"], ["A2", "[erased]", "[erased]", "[erased]"],
                    ["A3", "Ravi Kumar", "+919845099999", "Hassan"],
                ])
    }

    @Test func aValueThatDoesNotOpenStopsTheProjectionThere() throws {
        let h = try ProjectionHarness([Accounts()], opener: opener)
        try h.given(opened("A1", name: "pd1.account:A1:k.name", phone: "pd1.account:A1:k.phone"), stream: "account-A1")
        try h.given(opened("A1b", name: "pd1.account:A1:k.tampered", phone: "pd1.account:A1:k.phone"), stream: "account-A1b")
        let stop = try #require(h.database.stop)
        #expect(stop.position == 2)
        #expect(stop.error.contains("personal data cannot be opened") && stop.error.contains("k.tampered"), "\(stop.error)")
        #expect(try h.rows("SELECT account_id FROM accounts") == [["A1"]])
    }

    /// No key store to open with says nothing of the event: the batch is not applied, nothing
    /// is recorded as a stop, and the same event applies once the keys can be reached.
    @Test func aKeyStoreThatCannotBeReadStopsNothingInTheFile() throws {
        let h = try ProjectionHarness([Accounts()], opener: KeyStoreOutOfReach())
        try h.given(opened("A0", name: "Ravi Kumar", phone: "+919845099999", address: "Hassan"), stream: "account-A0")
        let event = try h.record(
            opened("A1", name: "pd1.account:A1:k.name", phone: "pd1.account:A1:k.phone"), stream: "account-A1")
        #expect {
            try h.database.apply([event])
        } throws: { error in
            (error as? ProjectorError)?.kind == .keyStore && "\(error)".contains("no key store at /keys.db")
        }
        #expect(h.database.stop == nil)
        #expect(h.database.checkpoint == 1)
        #expect(try h.rows("SELECT account_id FROM accounts") == [["A0"]])
    }

    @Test func withoutAnOpenerProjectionsSeeTheSealedForm() throws {
        let h = try ProjectionHarness([Accounts()])
        try h.given(opened("A1", name: "pd1.account:A1:k.name", phone: "pd1.account:A1:k.phone"), stream: "account-A1")
        #expect(try h.rows("SELECT name FROM accounts") == [["pd1.account:A1:k.name"]])
    }

    /// What an erasure overwrites is gone from the file and its WAL: `secure_delete` zeroes
    /// what the update frees, and the WAL is checkpointed and truncated after the batch.
    @Test func anErasureLeavesNoCopyInTheFileOrItsLog() throws {
        let h = try ProjectionHarness([Accounts()])
        let path = h.directory.appendingPathComponent("test.db").path
        try h.given(
            opened("A1", name: "Zebulon Quixotic", phone: "+919800000001", address: "Marigold Lane"), stream: "account-A1")
        try h.given(
            .personalDataErased(PersonalDataErased(subjectId: "A1", kind: .account, erasedBy: "admin-1", reason: "asked")),
            stream: "account-A1")
        let bytes = fileAndLog(path)
        #expect(bytes.count > 4096)
        for text in ["Zebulon Quixotic", "+919800000001", "Marigold Lane"] {
            let found = bytes.contains(Array(text.utf8))  // not in the expectation, which would print every byte
            #expect(!found, "\(text) survives in the file")
        }
        #expect(try h.rows("SELECT name FROM accounts") == [["[erased]"]])
    }

    /// The truncation an erasure owes outlives the projector: here a reader held it back,
    /// and was still open when the projector stopped, so SQLite kept the WAL with the old
    /// frames; the next projector on the file truncates it once the reader lets it.
    @Test func anErasureHeldBackByAReaderIsTruncatedAfterARestart() throws {
        let h = try ProjectionHarness([Accounts()])
        let path = h.directory.appendingPathComponent("restarted.db").path
        var database: ProjectionDatabase? = try ProjectionDatabase(
            path: path, name: "test", projections: [Accounts()])
        try database?.apply([
            try h.record(
                opened("A1", name: "Zebulon Quixotic", phone: "+919800000001", address: "Marigold Lane"),
                stream: "account-A1")
        ])
        let reader = try SQLiteConnection(path: path, mode: .readOnly)
        try reader.execute("BEGIN")
        #expect(try reader.scalarInteger("SELECT count(*) FROM accounts") == 1)
        try database?.apply([
            try h.record(
                .personalDataErased(
                    PersonalDataErased(subjectId: "A1", kind: .account, erasedBy: "admin-1", reason: "asked")),
                stream: "account-A1")
        ])
        database = nil
        let restarted = try ProjectionDatabase(path: path, name: "test", projections: [Accounts()])
        try reader.execute("COMMIT")
        // An owed truncation is tried again after a batch at most once a second.
        Thread.sleep(forTimeInterval: 1.1)
        try restarted.apply([
            try h.record(
                opened("A2", name: "Ravi Kumar", phone: "+919845099999", address: "Hassan"), stream: "account-A2")
        ])
        let bytes = fileAndLog(path)
        for text in ["Zebulon Quixotic", "+919800000001", "Marigold Lane"] {
            let found = bytes.contains(Array(text.utf8))
            #expect(!found, "\(text) survives in the file or its log")
        }
        #expect(
            try restarted.query("SELECT name FROM accounts ORDER BY account_id") == [["[erased]"], ["Ravi Kumar"]])
    }
}
