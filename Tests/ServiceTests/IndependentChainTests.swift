import Bus
import CommandService
import EventStore
import Foundation
import StrataCore
import StrataTesting
import Testing
import Workloads

/// The hash chain recomputed outside Swift: Tests/IndependentChecks/chain.py (Python,
/// standard library only, no code shared with the store) reads the whole history as the
/// real service returns it and must find every hash, every prevHash link and every
/// position right; and it must notice one altered byte.
@Suite struct IndependentChainTests {
    @Test func pythonRecomputesTheChainOverTheServedHistory() throws {
        let data = try ChildProcess.temporaryDirectory("strata-chain")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        let context = try ZMQContext()
        let commands = try service.commandClient(context)
        defer { commands.close() }
        let history = try service.historyClient(context)
        defer { history.close() }

        // Loans with payments, invoices with payments, and text that tests the canonical
        // form: quotes, backslashes, slashes, non-ASCII, an emoji, U+2028, a line break, a tab.
        // In an invoice's notes it is stored in clear; in an account's name and address it is
        // personal data, stored sealed (and so never seen in clear in history).
        let workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "hc", agents: 2, accountsPerAgent: 3, today: Timestamp.now().date)
        let unusualText = "Rāmesh \"Ram\" Kumār \\ ಮೈಸೂರು / <b>&amp; 😀\u{2028}end"
        let unusualAddress = "12/3 Market Road\nMysuru\t570001 \u{2029} – “quoted”"
        let unusual = CommandBody(
            id: "hc-unusual-account", type: "OpenAccount", actor: ServiceProcess.admin,
            payload: [
                "accountId": "hc-acct-unusual",
                "name": .string(unusualText),
                "phone": "+91 98450 12345",
                "address": .string(unusualAddress),
                "email": "ram.kumar@example.com",
                "assignedAgentId": .string(workload.agentId(0)),
            ])
        let today = Timestamp.now().date.description
        let unusualInvoice = CommandBody(
            id: "hc-unusual-invoice", type: "CreateInvoice", actor: ServiceProcess.admin,
            payload: [
                "invoiceId": "hc-inv-unusual",
                "customer": ["partyId": "hc-party-unusual", "name": "Unusual Traders"],
                "issueDate": .string(today), "dueDate": .string(today),
                "lines": [["description": "Ram's \"rice\" \\ ಅಕ್ಕಿ / 😀 – “25 kg”", "quantityMilli": 1000, "unitPriceCents": 100, "taxRateBp": 0]],
                "notes": .string(unusualText + "\n" + unusualAddress),
            ])
        let bodies = workload.setup() + [unusual, unusualInvoice] + (0..<30).flatMap(workload.loan) + (0..<15).flatMap(workload.invoice)
        for body in bodies { try commands.send(body.json) }
        for body in bodies {
            let reply = try JSONParser.parse(try #require(try commands.receive(timeoutMilliseconds: 30_000), "no reply for \(body.id)"))
            try #require(reply["ok"] == .bool(true), "\(body.id): \(String(decoding: CanonicalJSON.bytes(reply), as: UTF8.self))")
        }

        // The whole history, in pages of 100, each event's bytes as the service sent them.
        var lines: [[UInt8]] = []
        var head: Int64 = -1
        while true {
            let raw = try #require(
                try history.request(HistoryRequest(after: Int64(lines.count), limit: 100).json, timeoutMilliseconds: 15_000))
            let page = try JSONParser.parse(raw)
            head = try #require(page["head"]?.integerValue, "\(String(decoding: raw, as: UTF8.self))")
            let slices = try #require(historyEventSlices(raw))
            try #require(slices.count == page["events"]?.arrayValue?.count)
            lines += slices
            if slices.count < 100 { break }
        }
        #expect(service.stop() == 0)
        try #require(lines.count == Int(head) && head > 150, "the history has every event: \(lines.count) of \(head)")
        let parsed = try lines.map { try JSONParser.parse($0) }
        let types = Set(parsed.compactMap { $0["type"]?.stringValue })
        for type in ["PaymentReceived", "CommissionEarned", "InvoiceCreated", "InvoicePaymentRecorded", "InvoicePaid", "AccountOpened"] {
            #expect(types.contains(type), "the history has \(type)")
        }
        let text = lines.map { String(decoding: $0, as: UTF8.self) }
        #expect(text.contains { $0.contains("\u{2028}") && $0.contains("😀") }, "the unusual invoice is in the history")
        #expect(text.contains { $0.contains("hc-acct-unusual") }, "so is the unusual account")
        #expect(!text.contains { $0.contains("98450 12345") || $0.contains("ram.kumar@") }, "its personal data sealed")

        let store = try SQLiteEventStore(readingAt: data.appendingPathComponent("events.db").path)
        let lastStored = try #require(try store.events(after: head - 1, limit: 1).first)

        // Intact: every hash recomputed, ending at the store's own last hash.
        let intact = try chainCheckRun(lines)
        #expect(intact.exitCode == 0, "chain.py: \(intact.stdout) \(intact.stderr)")
        #expect(intact.summary["ok"] == .bool(true))
        #expect(intact.summary["events"]?.integerValue == head)
        #expect(intact.summary["firstPosition"]?.integerValue == 1)
        #expect(intact.summary["lastPosition"]?.integerValue == head)
        #expect(intact.summary["lastHash"]?.stringValue == lastStored.hash)
        #expect(intact.summary["nonCanonicalLines"]?.integerValue == 0, "history carries canonical JSON")
        #expect(try store.verify().isIntact, "and the store's own verifier agrees")

        // One byte of one event's data altered (a digit, so the JSON stays valid): exit 1,
        // naming that position.
        let victim = Int(head / 2)
        var altered = lines
        let dataStart = try #require(chainCheckFind(Array(#""data":{"#.utf8), in: altered[victim]))
        let digit = try #require(
            altered[victim][dataStart...].firstIndex { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "8") },
            "a digit in the data of \(String(decoding: altered[victim], as: UTF8.self))")
        altered[victim][digit] += 1
        let tampered = try chainCheckRun(altered)
        #expect(tampered.exitCode == 1, "chain.py must fail on an altered byte: \(tampered.stdout)")
        #expect(tampered.summary["ok"] == .bool(false))
        let problems = tampered.summary["problems"]?.arrayValue ?? []
        #expect(problems.count == 1, "one altered event, one problem: \(tampered.stdout)")
        #expect(problems.first?["position"]?.integerValue == Int64(victim + 1))
        #expect(problems.first?["kind"]?.stringValue == "hash")

        // A missing event: a gap and a broken link.
        var gap = lines
        gap.remove(at: victim)
        let missing = try chainCheckRun(gap)
        #expect(missing.exitCode == 1, "chain.py must fail on a gap: \(missing.stdout)")
        let kinds = Set((missing.summary["problems"]?.arrayValue ?? []).compactMap { $0["kind"]?.stringValue })
        #expect(kinds == ["position", "prevHash"], "\(missing.stdout)")

        // Two events swapped: positions and links both out of order.
        var swapped = lines
        swapped.swapAt(victim, victim + 1)
        #expect(try chainCheckRun(swapped).exitCode == 1)
    }
}

/// Runs Tests/IndependentChecks/chain.py over `lines`: its exit code, output and summary.
private func chainCheckRun(_ lines: [[UInt8]]) throws -> (exitCode: Int32, stdout: String, stderr: String, summary: JSONValue) {
    let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("IndependentChecks").appendingPathComponent("chain.py")
    try #require(FileManager.default.fileExists(atPath: script.path), "missing \(script.path)")
    let input = lines.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n") + "\n"
    let result = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path], stdin: input)
    let summary = try JSONParser.parse(Array(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines).utf8))
    return (result.exitCode, result.stdout, result.stderr, summary)
}


private func chainCheckFind(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard haystack.count >= needle.count else { return nil }
    return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
}
