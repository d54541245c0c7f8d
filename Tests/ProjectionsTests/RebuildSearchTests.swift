import Events
import Foundation
import ProjectorRuntime
import Projections
import StrataCore
import StrataTesting
import Testing

/// A rebuild creates most plain indexes only after its last event. Whatever `apply` finds rows
/// by must then still be a primary key or an index the projection declares
/// (`searchedWhileApplying`), or a search reads its table whole once per event: with thousands
/// of invoices and of party erasures, a rebuild that took seconds took minutes.
@Suite struct RebuildSearchTests {
    private typealias F = LendingFixtures

    /// What each statement a rebuild ran read by walking a table whole (SQLite's own count,
    /// `sqlite_stmt.nscan`), against how often it ran. A table of one row (the dashboard) is
    /// walked one row a run; a search of a larger table without its index, one row of it a
    /// run per row the table holds.
    @Test func noStatementOfARebuildReadsATableWhole() throws {
        let h = try ProjectionHarness(ReadModels.all, name: "readmodels")
        try h.given(F.agentRegistered("agent-1", username: "ravi"), stream: "user-agent-1", actor: "agent-1")
        try h.given(F.agentApproved("agent-1"), stream: "user-agent-1")
        for n in 1...12 {
            let (account, loan) = ("A\(n)", "L\(n)")
            try h.given(F.accountOpened(account), stream: "account-\(account)", actor: "agent-1")
            try h.given(F.loanRequested(loan, account: account), stream: "loan-\(loan)", actor: "agent-1")
            try h.given(F.loanApproved(loan), stream: "loan-\(loan)")
            try h.given(F.partialPayment(loan, id: "P\(n)"), stream: "loan-\(loan)", actor: "agent-1")
        }
        for n in 1...12 {
            let party = "party-\(n % 4)"
            try h.given(invoice("I\(n)", party: party), stream: "invoice-I\(n)")
            try h.given(payment("IP\(n)", of: "I\(n)"), stream: "invoice-I\(n)")
        }
        for (subject, kind) in [("party-1", SubjectKind.party), ("A3", .account), ("agent-1", .user)] {
            try h.given(
                .personalDataErased(PersonalDataErased(subjectId: subject, kind: kind, erasedBy: "admin-1", reason: "asked")),
                stream: "\(kind == .party ? "party" : kind == .account ? "account" : "user")-\(subject)")
        }

        let path = h.directory.appendingPathComponent("rebuilt.db").path
        let rebuilt = try ProjectionDatabase(
            path: path, name: "readmodels", projections: ReadModels.all, durability: .scratch)
        try rebuilt.apply(h.recorded)
        #expect(rebuilt.stop == nil)
        let statements = try rebuilt.query("SELECT sql, nscan, run FROM sqlite_stmt WHERE run > 0")
        #expect(statements.count > 30)
        for row in statements {
            guard case .text(let sql) = row[0], case .integer(let scanned) = row[1], case .integer(let runs) = row[2]
            else { continue }
            #expect(scanned <= runs, "\(scanned) rows walked in \(runs) runs of \(sql)")
        }
        // The erasure found its party's three invoices all the same.
        #expect(
            try rebuilt.query("SELECT count(*) FROM invoices WHERE customer_name = '[erased]'") == [[.integer(3)]])
    }

    /// Only what `apply` searches by is created before the events: the rest are put off.
    @Test func aRebuildPutsOffEveryPlainIndexButThoseApplySearches() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rebuild-search-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let rebuilt = try ProjectionDatabase(
            path: directory.appendingPathComponent("rebuilt.db").path, name: "readmodels",
            projections: ReadModels.all, durability: .scratch)
        let before = try rebuilt.query("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
        #expect(before == [[.text("invoices_by_party")]])
        try rebuilt.finishBuilding()
        let after = try rebuilt.query("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
        let declared = ReadModels.all.flatMap(\.schema.statements).filter { $0.hasPrefix("CREATE INDEX") }.count
        #expect(after == [[.integer(Int64(declared))]])
    }

    private func invoice(_ id: String, party: String) -> StrataEvent {
        .invoiceCreated(
            InvoiceCreated(
                invoiceId: id, series: "INV", invoiceNumber: "INV-\(id)",
                customer: InvoiceCustomer(partyId: party, name: PersonalData("Customer \(party)")), issueDate: F.date("2026-10-01"),
                dueDate: F.date("2026-11-30"),
                lines: [
                    InvoiceLine(
                        description: "Goods", quantityMilli: 1000, unitPriceCents: 1000, taxRateBp: 0,
                        amountCents: 1000, discountCents: 0, taxableCents: 1000, taxCents: 0)
                ],
                totals: InvoiceTotals(
                    subtotalCents: 1000, discountCents: 0, taxableCents: 1000, taxCents: 0, totalCents: 1000),
                createdBy: "admin-1"))
    }

    private func payment(_ id: String, of invoice: String) -> StrataEvent {
        .invoicePaymentRecorded(
            InvoicePaymentRecorded(
                paymentId: id, invoiceId: invoice, amountCents: 400, paidOn: F.date("2026-11-10"), method: .bank,
                recordedBy: "admin-1", paidTotalCents: 400, balanceCents: 600, status: .partiallyPaid))
    }
}
