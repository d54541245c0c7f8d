import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

/// The read models analysts query, computed again outside Swift: Tests/IndependentChecks/read_models.py
/// (Python, standard library only, no code shared with the projections) folds the history
/// `strata replay` prints, per docs/read-models.md and DOMAIN.md, and compares every row of every
/// named query it covers with `strata query NAME --format json`, over a history made by the real
/// processes: `strata up`, the demo month, and commands that reach what the demo does not.
@Suite struct IndependentReadModelTests {
    @Test func pythonComputesTheSameReadModelsFromTheEvents() throws {
        let data = try ChildProcess.temporaryDirectory("strata-readmodels-check")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let endpoints = try ["commands", "events", "history"].map {
            ("--\($0)", "tcp://127.0.0.1:\(try freeLoopbackPort())")
        }
        let up = try StrataProcess(
            ["up", "--data", data.path] + endpoints.flatMap { [$0.0, $0.1] } + ["--key", ServiceProcess.Keys.service])
        defer { up.stop() }
        for name in ["serve", "project-readmodels", "project-audit"] {
            try up.waitForLine(containing: "\(name): ready ")
        }

        let today = Timestamp.now().date
        let demo = try ChildProcess.strata(
            ["demo", "--prefix", "rm", "--today", today.adding(days: -60).description, "--data", data.path,
             "--commands", endpoints[0].1, "--timeout", "120"])
        try #require(demo.exitCode == 0, "\(demo.stdout)\(demo.stderr)")
        let sent = try ChildProcess.strata(
            ["send", "-", "--commands", endpoints[0].1, "--data", data.path, "--timeout", "60"],
            stdin: readModelCheckCommands(today: today).joined(separator: "\n") + "\n")
        try #require(sent.exitCode == 0, "\(sent.stdout)\(sent.stderr)")

        let history = try ChildProcess.strata(["replay", "--data", data.path])
        try #require(history.exitCode == 0, "\(history.stderr)")
        let head = history.stdout.split(separator: "\n").count
        try #require(head > 250, "a history worth checking: \(head) events")

        // Today and a day in the past (aging, receivables as the books stood then), then the
        // read models as of an earlier position, built by `--as-of` from the store.
        for day in [today, today.adding(days: -50), today.adding(days: -40)] {
            let check = try readModelCheck(data, date: day, events: history.stdout)
            #expect(check.exitCode == 0, "read_models.py on \(day):\n\(check.stdout)\(check.stderr)")
            let summary = try JSONParser.parse(
                Array((check.stdout.split(separator: "\n").last.map(String.init) ?? "").utf8))
            #expect(summary["differences"] == .integer(0), "\(check.stdout)")
            // Every query answered rows, so none was compared empty with empty.
            let counts = try #require(summary["queries"]?.objectValue, "\(check.stdout)")
            #expect(counts.count == 16 && counts.values.allSatisfy { ($0.integerValue ?? 0) > 0 }, "\(check.stdout)")
            #expect((summary["values"]?.integerValue ?? 0) > 5_000, "\(check.stdout)")
        }
        let position = head * 2 / 3
        let earlier = try ChildProcess.strata(["replay", "--data", data.path, "--to", "\(position)"])
        let travel = try readModelCheck(data, date: today.adding(days: -30), events: earlier.stdout, asOf: true)
        #expect(
            travel.exitCode == 0 && travel.stdout.contains(#""differences": 0"#),
            "read_models.py --as-of \(position):\n\(travel.stdout)\(travel.stderr)")

        // The check must see a wrong value: one loan's outstanding amount off by a cent in the
        // file the queries read (the system stopped, so nothing writes it again).
        up.send(signal: SIGINT)
        #expect(up.waitForExit(timeout: 60) == 0, "\(up.log)")
        let readModels = try SQLiteConnection(path: data.appendingPathComponent("readmodels.db").path, mode: .readWrite)
        try readModels.execute("UPDATE loans SET outstanding_cents = outstanding_cents + 1 WHERE loan_id = 'x-loan-3'")
        let perturbed = try readModelCheck(data, date: today, events: history.stdout)
        #expect(perturbed.exitCode == 1, "\(perturbed.stdout)\(perturbed.stderr)")
        #expect(perturbed.stdout.contains("portfolio ('x-loan-3',) outstanding_cents"), "\(perturbed.stdout)")
        #expect(perturbed.stdout.contains("dashboard () collectible_cents"), "\(perturbed.stdout)")
    }
}

/// Runs Tests/IndependentChecks/read_models.py over `events` (replay's JSON lines).
private func readModelCheck(
    _ data: URL, date: LocalDate, events: String, asOf: Bool = false
) throws -> ChildProcess.Result {
    let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("IndependentChecks").appendingPathComponent("read_models.py")
    try #require(FileManager.default.fileExists(atPath: script.path), "missing \(script.path)")
    let arguments = [script.path, "--strata", ChildProcess.product("strata").path, "--data", data.path,
                     "--date", date.description] + (asOf ? ["--as-of"] : [])
    return try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3"] + arguments, stdin: events)
}

/// What the demo month leaves out: an account that moves to another agent between a loan's
/// request and its approval (the loan keeps its agent), a payment that only pays penalty, one
/// payment id on two loans and on two invoices, a default commission rate, a cancelled
/// invoice, erased account and customer, a second admin and an agent left pending.
private func readModelCheckCommands(today: LocalDate) -> [String] {
    func day(_ offset: Int) -> String { today.adding(days: -offset).description }
    let line = #"{"description":"Audit","quantityMilli":1000,"unitPriceCents":100000,"taxRateBp":1800}"#
    func invoice(_ id: String, issued: Int, due: Int, seller: String) -> String {
        #"{"id":"x-\#(id)","type":"CreateInvoice","actor":"root","payload":{"invoiceId":"\#(id)","#
            + #""customer":{"partyId":"x-party","name":"Kaveri Stores","stateCode":"29"},"#
            + #""issueDate":"\#(day(issued))","dueDate":"\#(day(due))","lines":[\#(line)],"#
            + #""sellerStateCode":"\#(seller)"}}"#
    }
    func account(_ id: String, agent: String) -> String {
        #"{"id":"x-\#(id)","type":"OpenAccount","actor":"root","payload":{"accountId":"\#(id)","name":"Asha","#
            + #""phone":"+919800000001","address":"1 Main Road","assignedAgentId":"\#(agent)"}}"#
    }
    func loan(_ id: String, actor: String, frequency: String, method: String, on offset: Int) -> String {
        #"{"id":"x-\#(id)","type":"RequestLoan","actor":"\#(actor)","payload":{"loanId":"\#(id)","#
            + #""accountId":"x-acct","principalCents":500000,"monthlyRateBp":400,"tenureMonths":3,"#
            + #""frequency":"\#(frequency)","interestMethod":"\#(method)","requestedOn":"\#(day(offset))"}}"#
    }
    func approve(_ id: String, on offset: Int) -> String {
        #"{"id":"x-approve-\#(id)","type":"ApproveLoan","actor":"root","payload":{"loanId":"\#(id)","#
            + #""approvedOn":"\#(day(offset))"}}"#
    }
    func pay(_ command: String, _ payment: String, loan: String, cents: Int, on offset: Int) -> String {
        #"{"id":"x-\#(command)","type":"ReceivePayment","actor":"root","payload":{"paymentId":"\#(payment)","#
            + #""loanId":"\#(loan)","amountCents":\#(cents),"paidOn":"\#(day(offset))","method":"BANK"}}"#
    }
    func payInvoice(_ command: String, invoice: String, cents: Int, on offset: Int) -> String {
        #"{"id":"x-\#(command)","type":"RecordInvoicePayment","actor":"root","payload":{"paymentId":"IP1","#
            + #""invoiceId":"\#(invoice)","amountCents":\#(cents),"paidOn":"\#(day(offset))","method":"CASH"}}"#
    }
    func erase(_ subject: String, _ kind: String) -> String {
        #"{"id":"x-erase-\#(subject)","type":"EraseSubject","actor":"root","payload":{"subjectId":"\#(subject)","#
            + #""kind":"\#(kind)","reason":"asked to be forgotten"}}"#
    }
    return [
        #"{"id":"x-rate","type":"SetCommissionRate","actor":"root","payload":{"rateBp":1500}}"#,
        account("x-acct", agent: "rm-agent-0"), account("x-acct-2", agent: "rm-agent-1"),
        loan("x-loan-1", actor: "root", frequency: "MONTHLY", method: "REDUCING", on: 100),
        loan("x-loan-2", actor: "rm-agent-0", frequency: "BI_MONTHLY", method: "REDUCING", on: 10),
        #"{"id":"x-move","type":"UpdateAccount","actor":"root","payload":{"accountId":"x-acct","#
            + #""assignedAgentId":"rm-agent-1"}}"#,
        approve("x-loan-1", on: 100),
        loan("x-loan-3", actor: "rm-agent-1", frequency: "WEEKLY", method: "FLAT", on: 70), approve("x-loan-3", on: 70),
        pay("pay-1", "P1", loan: "x-loan-1", cents: 1_000, on: 20),
        pay("pay-2", "P1", loan: "x-loan-3", cents: 200_000, on: 20),
        pay("pay-3", "P2", loan: "x-loan-1", cents: 300_000, on: 5),
        invoice("x-inv-1", issued: 80, due: 65, seller: "29"), invoice("x-inv-2", issued: 40, due: 10, seller: "27"),
        invoice("x-inv-3", issued: 3, due: 0, seller: "29"),
        payInvoice("inv-pay-1", invoice: "x-inv-1", cents: 50_000, on: 50),
        payInvoice("inv-pay-2", invoice: "x-inv-2", cents: 118_000, on: 5),
        #"{"id":"x-cancel","type":"CancelInvoice","actor":"root","payload":{"invoiceId":"x-inv-3","reason":"twice"}}"#,
        erase("x-acct-2", "ACCOUNT"), erase("x-party", "PARTY"),
        #"{"id":"x-admin","type":"RegisterUser","actor":"root","payload":{"userId":"x-admin","username":"second","#
            + #""email":"second@example.com","role":"ADMIN"}}"#,
        #"{"id":"x-agent","type":"RegisterUser","actor":"x-agent","payload":{"userId":"x-agent","username":"xagent","#
            + #""email":"xagent@example.com","role":"AGENT"}}"#,
    ]
}
