import CommandService
import Domain
import EventStore
import Events
import Foundation
import ProjectorRuntime
import Projections
import StrataCore
import StrataTesting
import Testing

/// A small, fixed history written through the real command writer into a real
/// `events.db`, with both projection files rebuilt from it: what the query tests ask of.
///
/// Every command runs at its own instant (the clock is set before each), so every
/// `recorded_at` and every "today" the domain sees is known. The story, in order:
/// - 2026-01-02: admin-1 (bootstrap) approves agents agent-1 (ravi) and agent-2 (meena);
///   agent-3 (kiran) signs up and stays pending.
/// - Accounts A1 "Lakshmi Iyer" and A2 "Das, Arjun" (agent-1), A3 `Priya "PN" Nair` (agent-2).
/// - L1: 30,000.00 at 4% a month for 3 months, monthly, reducing, approved 2026-01-05
///   (EMI 10,810.46). L2: 12,000.00 at 3% for 2 months, approved 2026-02-10. L3 (A2,
///   5,000.00) is requested and left pending.
/// - 2026-02-04: P1 pays L1's first installment exactly (10,810.46).
/// - 2026-02-01: invoice INV1 to Sri Ganesh Traders (C1), 1,000.00 + 18% GST, due 2026-02-15;
///   paid 500.00 on 2026-03-01.
struct KnownHistory {
    let data: URL
    /// The positions each command's events took, by command id.
    let positions: [String: ClosedRange<Int64>]
    let head: Int64

    static let commands: [(at: String, id: String, actor: String, type: String, payload: String)] = [
        ("2026-01-02T09:00:00.000Z", "reg-agent-1", "agent-1", "RegisterUser",
         #"{"userId":"agent-1","username":"ravi","email":"ravi@example.com","role":"AGENT"}"#),
        ("2026-01-02T09:01:00.000Z", "approve-agent-1", "admin-1", "ApproveAgent", #"{"agentId":"agent-1"}"#),
        ("2026-01-02T09:02:00.000Z", "reg-agent-2", "agent-2", "RegisterUser",
         #"{"userId":"agent-2","username":"meena","email":"meena@example.com","role":"AGENT"}"#),
        ("2026-01-02T09:03:00.000Z", "approve-agent-2", "admin-1", "ApproveAgent", #"{"agentId":"agent-2"}"#),
        ("2026-01-02T09:04:00.000Z", "reg-agent-3", "agent-3", "RegisterUser",
         #"{"userId":"agent-3","username":"kiran","email":"kiran@example.com","role":"AGENT"}"#),
        ("2026-01-02T10:00:00.000Z", "open-A1", "agent-1", "OpenAccount",
         #"{"accountId":"A1","name":"Lakshmi Iyer","phone":"+919845012345","address":"Mysuru","assignedAgentId":"agent-1"}"#),
        ("2026-01-02T10:05:00.000Z", "open-A2", "agent-1", "OpenAccount",
         #"{"accountId":"A2","name":"Das, Arjun","phone":"+919845012346","email":"arjun@example.com","address":"Hubballi","assignedAgentId":"agent-1"}"#),
        ("2026-01-02T10:10:00.000Z", "open-A3", "agent-2", "OpenAccount",
         #"{"accountId":"A3","name":"Priya \"PN\" Nair","phone":"+919845012347","address":"Udupi","assignedAgentId":"agent-2"}"#),
        ("2026-01-05T09:00:00.000Z", "request-L1", "agent-1", "RequestLoan",
         #"{"loanId":"L1","accountId":"A1","principalCents":3000000,"monthlyRateBp":400,"tenureMonths":3,"frequency":"MONTHLY"}"#),
        ("2026-01-05T11:00:00.000Z", "approve-L1", "admin-1", "ApproveLoan", #"{"loanId":"L1"}"#),
        ("2026-02-01T09:00:00.000Z", "invoice-INV1", "admin-1", "CreateInvoice",
         #"{"invoiceId":"INV1","customer":{"partyId":"C1","name":"Sri Ganesh Traders"},"issueDate":"2026-02-01","dueDate":"2026-02-15","lines":[{"description":"Ledger books","quantityMilli":10000,"unitPriceCents":10000,"taxRateBp":1800}]}"#),
        ("2026-02-04T12:00:00.000Z", "pay-P1", "agent-1", "ReceivePayment",
         #"{"paymentId":"P1","loanId":"L1","amountCents":1081046,"paidOn":"2026-02-04","method":"CASH"}"#),
        ("2026-02-10T09:00:00.000Z", "request-L2", "agent-2", "RequestLoan",
         #"{"loanId":"L2","accountId":"A3","principalCents":1200000,"monthlyRateBp":300,"tenureMonths":2,"frequency":"MONTHLY"}"#),
        ("2026-02-10T10:00:00.000Z", "approve-L2", "admin-1", "ApproveLoan", #"{"loanId":"L2"}"#),
        ("2026-02-20T09:00:00.000Z", "request-L3", "agent-1", "RequestLoan",
         #"{"loanId":"L3","accountId":"A2","principalCents":500000,"monthlyRateBp":350,"tenureMonths":2,"frequency":"MONTHLY"}"#),
        ("2026-03-01T09:00:00.000Z", "pay-INV1", "admin-1", "RecordInvoicePayment",
         #"{"paymentId":"IP1","invoiceId":"INV1","amountCents":50000,"paidOn":"2026-03-01","method":"BANK"}"#),
    ]

    /// Commands refused after the story, each journaled with its reason: what `strata query
    /// refusals` answers. A pending agent opens an account; an agent pays more than L1 owes; a
    /// loan is asked for at 9% for 20 months (two problems at once); an admin approves a loan
    /// that does not exist.
    static let refused: [(at: String, id: String, actor: String, type: String, payload: String)] = [
        ("2026-03-02T09:00:00.000Z", "open-A4", "agent-3", "OpenAccount",
         #"{"accountId":"A4","name":"Ramesh","phone":"+919845012348","address":"Mangaluru","assignedAgentId":"agent-3"}"#),
        ("2026-03-02T09:05:00.000Z", "overpay-L1", "agent-1", "ReceivePayment",
         #"{"paymentId":"P2","loanId":"L1","amountCents":99999999,"paidOn":"2026-03-02"}"#),
        ("2026-03-02T09:10:00.000Z", "request-L4", "agent-2", "RequestLoan",
         #"{"loanId":"L4","accountId":"A3","principalCents":100000,"monthlyRateBp":900,"tenureMonths":20,"frequency":"MONTHLY"}"#),
        ("2026-03-03T10:00:00.000Z", "approve-L9", "admin-1", "ApproveLoan", #"{"loanId":"L9"}"#),
    ]

    /// Writes the history into a fresh data directory and rebuilds readmodels.db and audit.db.
    static func make(sourceLocation: SourceLocation = #_sourceLocation) throws -> KnownHistory {
        let data = try ChildProcess.temporaryDirectory("strata-query")
        let clock = FixedClock(Timestamp("2026-01-02T08:00:00.000Z")!)
        let store = try SQLiteEventStore(path: data.appendingPathComponent("events.db").path, clock: clock)
        let admin = UserRegistered(
            userId: "admin-1", username: "root", email: "root@example.com", role: .admin, status: .approved)
        _ = try store.append(
            CommandWrite(
                commandId: "operator-bootstrap-admin-1", bodyDigest: HashChain.sha256([]), actor: "operator",
                commandType: "BootstrapAdmin",
                decision: .append([try NewEvent(stream: StreamName("user-admin-1")!, event: admin)], expectations: [:])))
        let writer = try CommandWriter(store: store, clock: clock)
        func decide(_ command: (at: String, id: String, actor: String, type: String, payload: String)) throws
            -> CommandReply
        {
            clock.set(Timestamp(command.at)!)
            let payload = try #require(try JSONParser.parse(Array(command.payload.utf8)).objectValue)
            let body = CommandBody(id: command.id, type: command.type, actor: command.actor, payload: payload)
            let pending = CommandWriter.Pending(
                routingId: [1], keyId: "svc", keyRoles: nil, body: body, bodyBytes: body.json, arrivedAt: clock.now(),
                configuration: DomainConfiguration())
            return try #require(writer.process([pending]).replies.first?.reply, sourceLocation: sourceLocation)
        }
        var positions: [String: ClosedRange<Int64>] = [:]
        for command in commands {
            let reply = try decide(command)
            guard case .accepted(_, _, let events) = reply, let first = events.first, let last = events.last else {
                Issue.record("\(command.id) was not accepted: \(reply)", sourceLocation: sourceLocation)
                continue
            }
            positions[command.id] = first.position...last.position
        }
        for command in refused {
            if case .accepted = try decide(command) {
                Issue.record("\(command.id) was accepted", sourceLocation: sourceLocation)
            }
        }
        let head = try store.head()
        for (name, projections) in [("readmodels", ReadModels.all), ("audit", ReadModels.audit)] {
            _ = try Rebuild.run(
                name: name, projections: projections, from: StoreHistory(store: store),
                into: data.appendingPathComponent("\(name).db").path)
        }
        return KnownHistory(data: data, positions: positions, head: head)
    }

    func remove() { try? FileManager.default.removeItem(at: data) }
}
