@testable import CommandService
import Domain
import EventStore
import Events
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import SubjectKeys
import Testing

// What the history endpoint answers to `"open":true`, judged on events sealed by the real
// writer under a real key store: the clear values, or a refusal that says whether asking
// again can help.

@Suite("History: opening personal data")
struct HistoryOpeningTests {
    /// A data directory with an agent and one borrower account, sealed as `serve` seals them.
    private struct Sealed {
        let directory: URL
        let events: [RecordedEvent]
        var keysPath: String { SubjectKeyStore.path(inDataDirectory: directory.path) }

        init() throws {
            directory = try ChildProcess.temporaryDirectory("history-opening")
            let store = try SQLiteEventStore(path: directory.appendingPathComponent("events.db").path, clock: FixedClock())
            try bootstrap(store)
            let sealer = try PersonalDataSealer(
                store: SubjectKeyStore(writingAt: SubjectKeyStore.path(inDataDirectory: directory.path)))
            let writer = try CommandWriter(store: store, clock: FixedClock(), sealer: sealer)
            events = writer.process([
                pending(
                    "s1", actor: "agent-7",
                    .registerUser(
                        RegisterUser(userId: "agent-7", username: "ravi", email: "ravi@example.com", role: .agent))),
                pending("s2", actor: "admin-1", .approveAgent(ApproveAgent(agentId: "agent-7"))),
                pending(
                    "s3", actor: "agent-7",
                    .openAccount(
                        OpenAccount(
                            accountId: "A1", name: "Lakshmi Narayan", phone: "+919845012345", email: nil,
                            address: "Mysuru", assignedAgentId: "agent-7"))),
            ]).events
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    @Test func sealedValuesAreOpenedByPosition() throws {
        let sealed = try Sealed()
        defer { sealed.remove() }
        let account = try #require(sealed.events.last)
        let opened = try HistoryResponder.opened(sealed.events, with: PersonalDataOpener(keyStorePath: sealed.keysPath))
            .get()
        #expect(opened[String(account.position)]?["/name"] == "Lakshmi Narayan", "\(opened)")
    }

    /// A key store that cannot be read says nothing of the values: the refusal is one a
    /// projector asks again after (`KEY_STORE_FAILURE`), not one it ends on.
    @Test func aKeyStoreThatCannotBeReadIsAFailureThatMayClear() throws {
        let sealed = try Sealed()
        defer { sealed.remove() }
        let missing = sealed.directory.appendingPathComponent("elsewhere/keys.db").path
        let result = HistoryResponder.opened(sealed.events, with: PersonalDataOpener(keyStorePath: missing))
        guard case .failure(let error) = result else {
            Issue.record("opened without a key store: \(result)")
            return
        }
        #expect(error.code == .internal && error.reason == "KEY_STORE_FAILURE", "\(error)")
    }

    /// A key that does not open its value (here the secret was altered) is refused the same
    /// way however often it is asked for.
    @Test func aValueThatDoesNotOpenIsUnreadable() throws {
        let sealed = try Sealed()
        defer { sealed.remove() }
        let keys = try SQLiteConnection(path: sealed.keysPath, mode: .readWrite)
        try keys.execute("UPDATE subject_keys SET secret = randomblob(length(secret)) WHERE subject LIKE 'account%'")
        #expect(keys.changes == 1)
        keys.close()
        let result = HistoryResponder.opened(sealed.events, with: PersonalDataOpener(keyStorePath: sealed.keysPath))
        guard case .failure(let error) = result else {
            Issue.record("an altered key opened the value: \(result)")
            return
        }
        #expect(error.code == .internal && error.reason == "PERSONAL_DATA_UNREADABLE", "\(error)")
    }

    /// Only the catalog's personal fields are opened. Free text that merely begins as the sealed
    /// form does (an invoice's notes, a line's description), even with a real key's id, is no
    /// personal data: it is neither opened nor a reason to refuse the page, which every later
    /// request from that position, a projector's away from the service included, would meet.
    @Test func freeTextThatBeginsLikeASealedValueIsNotOpened() throws {
        let sealed = try Sealed()
        defer { sealed.remove() }
        let account = try #require(sealed.events.last)
        let accountData = String(decoding: account.data, as: UTF8.self)
        let keyId = try #require(accountData.firstRange(of: "pd1.account:").map { range in
            accountData[range.lowerBound...].dropFirst(4).prefix { $0 != "." }
        })
        let store = try SQLiteEventStore(
            path: sealed.directory.appendingPathComponent("events.db").path, clock: FixedClock())
        let writer = try CommandWriter(
            store: store, clock: FixedClock(),
            sealer: try PersonalDataSealer(store: SubjectKeyStore(writingAt: sealed.keysPath)))
        let day = LocalDate("2026-11-20")!
        let invoice = CreateInvoice(
            invoiceId: "I1", customer: InvoiceCustomer(partyId: "P1", name: "Suresh Traders"),
            issueDate: day, dueDate: day,
            lines: [
                InvoiceLineRequest(
                    description: "pd1.\(keyId).AAAA", quantityMilli: 1000, unitPriceCents: 500, taxRateBp: 0)
            ],
            notes: "pd1.see the order of 12 November")
        let committed = writer.process([pending("i1", actor: "agent-7", .createInvoice(invoice))])
        let created = try #require(committed.events.last)
        #expect(created.type == InvoiceCreated.eventType)
        let opened = try HistoryResponder.opened(
            sealed.events + committed.events, with: PersonalDataOpener(keyStorePath: sealed.keysPath)
        ).get()
        #expect(opened[String(created.position)] == .object(["/customer/name": "Suresh Traders"]), "\(opened)")
        #expect(opened[String(account.position)]?["/name"] == "Lakshmi Narayan", "\(opened)")
    }
}
