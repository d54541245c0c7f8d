import Events
import Foundation
import ProjectorRuntime
import Projections
import StrataCore
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

private func opened(_ id: String, name: String, phone: String, address: String = "pd1.account:A1:k.address") -> StrataEvent {
    .accountOpened(
        AccountOpened(
            accountId: id, name: PersonalData(name), phone: PersonalData(phone), address: PersonalData(address),
            assignedAgentId: "agent-1", openedBy: "agent-1", status: .active))
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
        var bytes: [UInt8] = []
        for suffix in ["", "-wal"] { bytes += (try? Array(Data(contentsOf: URL(fileURLWithPath: path + suffix)))) ?? [] }
        #expect(bytes.count > 4096)
        for text in ["Zebulon Quixotic", "+919800000001", "Marigold Lane"] {
            let needle = Array(text.utf8)
            let found = (0...(bytes.count - needle.count)).contains { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
            #expect(!found, "\(text) survives in the file")
        }
        #expect(try h.rows("SELECT name FROM accounts") == [["[erased]"]])
    }
}
