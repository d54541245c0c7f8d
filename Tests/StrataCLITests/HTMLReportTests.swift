import Events
import Foundation
import FoundationXML
import Projections
import StrataCore
import StrataTesting
import Testing

@testable import StrataCLI

/// The report's figures and page, from a real readmodels.db built from events
/// (`ReportFixtures.book`, every figure worked out by hand as of 2026-03-31).
@Suite struct HTMLReportTests {
    private typealias F = ReportFixtures

    @Test func theFiguresAreReadFromOneSnapshot() throws {
        let h = try F.book()
        let figures = try F.figures(h)
        #expect(figures.position == 28)
        #expect(figures.stop == nil)
        #expect(
            figures.headline
                == Dashboard.Headline(
                    approvedAgents: 2, pendingAgents: 1, activeAccounts: 2, loansReleased: 4,
                    principalReleasedCents: 4_900_000, activeLoans: 3, collectibleCents: 4_287_189,
                    collectedCents: 1_024_000, pendingApprovals: 2))
        #expect(
            figures.portfolio == [
                .init(
                    status: "PENDING_APPROVAL", loans: 1, principalCents: 2_000_000, paidCents: 0, outstandingCents: 0),
                .init(
                    status: "ACTIVE", loans: 3, principalCents: 4_500_000, paidCents: 600_000,
                    outstandingCents: 4_287_189),
                .init(status: "CLOSED", loans: 1, principalCents: 400_000, paidCents: 424_000, outstandingCents: 0),
                .init(status: "REJECTED", loans: 1, principalCents: 1_500_000, paidCents: 0, outstandingCents: 0),
            ])
        #expect(figures.collectionsFrom == F.date("2026-01-31"))
        #expect(
            figures.collections == [
                .init(
                    day: "2026-02-05", loanPayments: 1, loanCollectedCents: 424_000, invoicePayments: 0,
                    invoiceCollectedCents: 0, totalCollectedCents: 424_000),
                .init(
                    day: "2026-03-16", loanPayments: 1, loanCollectedCents: 600_000, invoicePayments: 1,
                    invoiceCollectedCents: 100_000, totalCollectedCents: 700_000),
                .init(
                    day: "2026-03-20", loanPayments: 0, loanCollectedCents: 0, invoicePayments: 1,
                    invoiceCollectedCents: 50_000, totalCollectedCents: 50_000),
            ])
        #expect(
            figures.overdue == [
                .init(bucket: .days1to30, loans: 1, overdueCents: 270_000, outstandingCents: 530_000),
                .init(bucket: .days31to60, loans: 1, overdueCents: 1_616_144, outstandingCents: 2_697_189),
                .init(bucket: .days61to90, loans: 0, overdueCents: 0, outstandingCents: 0),
                .init(bucket: .over90, loans: 1, overdueCents: 1_060_000, outstandingCents: 1_060_000),
            ])
        #expect(figures.mostOverdue.map(\.loanId) == ["L2", "L1", "L3"])
        #expect(figures.mostOverdue.map(\.daysOverdue) == [101, 55, 11])
        #expect(
            figures.agents == [
                .init(
                    agentId: "agent-1", username: "ravi", loansRequested: 4, loansReleased: 2,
                    principalReleasedCents: 3_400_000, collectedCents: 1_024_000, payments: 2, earnedCents: 14_400,
                    collectibleCents: 14_400),
                .init(
                    agentId: "agent-2", username: F.hostileUsername, loansRequested: 2, loansReleased: 2,
                    principalReleasedCents: 1_500_000, collectedCents: 0, payments: 0, earnedCents: 0,
                    collectibleCents: 0),
            ])
        #expect(
            figures.owingMost == [
                Receivables.CustomerAging(
                    partyId: "C-2", name: "Asha Traders", currentCents: 150_000, days1To30Cents: 0,
                    days31To60Cents: 0, days61To90Cents: 450_000, over90DaysCents: 0, totalCents: 600_000),
                Receivables.CustomerAging(
                    partyId: "C-1", name: F.hostileCustomer, currentCents: 0, days1To30Cents: 200_000,
                    days31To60Cents: 0, days61To90Cents: 0, over90DaysCents: 0, totalCents: 200_000),
            ])
        #expect(
            figures.receivablesTotal
                == .init(
                    customers: 2, currentCents: 150_000, days1To30Cents: 200_000, days31To60Cents: 0,
                    days61To90Cents: 450_000, over90DaysCents: 0, totalCents: 800_000))
    }

    @Test func thePageShowsEachFigureInItsRow() throws {
        let html = try F.render(try F.book())
        #expect(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"))
        #expect(html.contains("<title>Strata report as of 2026-03-31</title>"))
        #expect(
            html.contains(
                "As of <strong>2026-03-31</strong> · read models at position <strong>28</strong> · "
                    + "generated 2026-04-01T08:30:00.000Z"))
        // Headline cards.
        #expect(html.contains("<div class=\"card-label\">Collected</div><div class=\"card-value\">10,240.00</div>"))
        #expect(
            html.contains(
                "<div class=\"card-label\">Still to collect</div><div class=\"card-value\">42,871.89</div>"
                    + "<div class=\"card-note\">3 active loans</div>"))
        #expect(
            html.contains(
                "<div class=\"card-label\">Overdue</div><div class=\"card-value\">29,461.44</div>"
                    + "<div class=\"card-note\">3 loans late</div>"))
        #expect(
            html.contains(
                "<div class=\"card-label\">Receivables</div><div class=\"card-value\">8,000.00</div>"
                    + "<div class=\"card-note\">2 customers owing</div>"))
        // Portfolio by status.
        #expect(html.contains(row("Pending approval", "1", "20,000.00", "0.00", "0.00")))
        #expect(html.contains(row("Active", "3", "45,000.00", "6,000.00", "42,871.89")))
        #expect(html.contains(row("Closed", "1", "4,000.00", "4,240.00", "0.00")))
        #expect(html.contains(row("Rejected", "1", "15,000.00", "0.00", "0.00")))
        #expect(html.contains(foot("Total", "6", "84,000.00", "10,240.00", "42,871.89")))
        // Collections.
        #expect(html.contains(row("2026-03-16", "1", "6,000.00", "1", "1,000.00", "7,000.00")))
        #expect(html.contains(foot("Total", "2", "10,240.00", "2", "1,500.00", "11,740.00")))
        #expect(html.contains("<g><title>2026-03-16: Loans 6,000.00, Invoices 1,000.00, total 7,000.00</title>"))
        // Overdue aging buckets.
        #expect(html.contains(row("1–30 days", "1", "2,700.00", "5,300.00")))
        #expect(html.contains(row("31–60 days", "1", "16,161.44", "26,971.89")))
        #expect(html.contains(row("61–90 days", "0", "0.00", "0.00")))
        #expect(html.contains(row("Over 90 days", "1", "10,600.00", "10,600.00")))
        #expect(html.contains(foot("Total", "3", "29,461.44", "42,871.89")))
        #expect(html.contains("<title>Active · 3 loans, Outstanding: 42,871.89</title>"))
        #expect(html.contains("<title>31–60 days · 1 loan, Overdue: 16,161.44</title>"))
        // Agents: agent-1 collected 10,240.00 (both payments), earned 144.00.
        #expect(
            html.contains(
                row("agent-1", "ravi", "4", "2", "34,000.00", "10,240.00", "144.00", "144.00", numeric: 2...7)))
        #expect(html.contains("<title>agent-1 (ravi): 10,240.00</title>"))
        // Receivables: per customer and per bucket.
        #expect(
            html.contains(
                row("Asha Traders", "C-2", "1,500.00", "0.00", "0.00", "4,500.00", "0.00", "6,000.00", numeric: 2...7)))
        #expect(
            html.contains(
                foot(
                    "Total", "2 customers", "1,500.00", "2,000.00", "0.00", "4,500.00", "0.00", "8,000.00",
                    numeric: 2...7)))
        #expect(html.contains("<title>61–90 days: 4,500.00</title>"))
    }

    @Test func namesPeopleTypedAreEscaped() throws {
        let html = try F.render(try F.book())
        #expect(html.contains("<th scope=\"row\">Tom &amp; Jerry &lt;script&gt;alert(1)&lt;/script&gt;</th>"))
        #expect(html.contains("<td>&lt;i&gt;meena&lt;/i&gt;</td>"))
        #expect(html.contains("agent-2 (&lt;i&gt;meena&lt;/i&gt;)</text>"))
        #expect(!html.lowercased().contains("<script"))
        #expect(!html.contains("<i>"))
        #expect(!html.contains("Tom & Jerry"))
        #expect("a\u{1}b\u{FFFF}'\"".htmlEscaped == "a\u{FFFD}b\u{FFFD}&#39;&quot;")
    }

    @Test func theFileFetchesNothing() throws {
        let html = try F.render(try F.book()).lowercased()
        for reference in ["http:", "https:", "://", "src=", "href=", "url(", "@import", "<script", "<link", "<img"] {
            #expect(!html.contains(reference), "the report contains \(reference)")
        }
    }

    @Test func thePageIsWellFormedXMLWithEveryChartTitled() throws {
        let html = try F.render(try F.book())
        let document = try XMLDocument(data: Data(html.utf8), options: [])
        #expect(document.rootElement()?.name == "html")
        let charts = try document.nodes(forXPath: "//svg")
        #expect(charts.count == 5)
        for case let chart as XMLElement in charts {
            let title = try chart.nodes(forXPath: "title").first?.stringValue ?? ""
            #expect(!title.isEmpty, "a chart without a title: \(chart.attribute(forName: "id")?.stringValue ?? "?")")
        }
        #expect(try document.nodes(forXPath: "//table").count == 6)
        // Portfolio 4 × 2 bars + 2 legend keys; collections 4 segments + 2 keys; overdue 4 × 2 + 2;
        // agents 2; receivables 5.
        #expect(try document.nodes(forXPath: "//svg//rect").count == 10 + 6 + 10 + 2 + 5)
        #expect(try document.nodes(forXPath: "//svg[@id='collections-chart']/g").count == 3)
    }

    /// The collections chart spans the 60 days to the date, whatever day money first came in: a
    /// chart that began on the first day with money drew fewer, wider days and hid the quiet start.
    @Test func theCollectionsChartCoversTheWholeWindow() throws {
        let html = try F.render(try F.book())
        let document = try XMLDocument(data: Data(html.utf8), options: [])
        let ticks = try document.nodes(forXPath: "//svg[@id='collections-chart']/text[@class='tick']").compactMap {
            $0.stringValue
        }
        // 60 days (2026-01-31 to 2026-03-31) labelled every sixth day from the first; amounts first.
        let days = (0..<10).map { F.date("2026-01-31").adding(days: $0 * 6).description.dropFirst(5) }
        #expect(Array(ticks.suffix(days.count)) == days.map(String.init), "\(ticks)")
        #expect(html.contains("collected on 3 days from 2026-01-31 to 2026-03-31"))

        // Where nothing came in for weeks before the date, the axis still starts 59 days back.
        let late = try F.render(try F.book(), asOf: F.date("2026-05-10"))
        let lateDocument = try XMLDocument(data: Data(late.utf8), options: [])
        let lateTicks = try lateDocument.nodes(forXPath: "//svg[@id='collections-chart']/text[@class='tick']")
        #expect(lateTicks.compactMap(\.stringValue).contains("03-12"), "the window starts on 2026-03-12")
    }

    @Test func theSameSnapshotGivesTheSameBytes() throws {
        let h = try F.book()
        let first = try F.render(h)
        #expect(try F.render(h) == first)
        let later = Timestamp("2026-04-02T00:00:00.000Z")!
        #expect(
            try F.render(h, generatedAt: later)
                == first.replacingOccurrences(of: F.generatedAt.description, with: later.description))
        #expect(first.components(separatedBy: F.generatedAt.description).count == 2)
    }

    @Test func anotherDateAgesTheBooksAgain() throws {
        // On 2026-03-15: L2 85 days late, L1 39 with only its first installment due before,
        // L3 not yet due; C-2's 5,000.00 (nothing paid yet) 74 days, C-1's 3,000.00 12 days.
        let html = try F.render(try F.book(), asOf: F.date("2026-03-15"))
        #expect(html.contains(row("31–60 days", "1", "16,161.44", "26,971.89")))
        #expect(html.contains(row("61–90 days", "1", "10,600.00", "10,600.00")))
        #expect(html.contains(row("Over 90 days", "0", "0.00", "0.00")))
        #expect(
            html.contains(
                foot(
                    "Total", "2 customers", "0.00", "3,000.00", "0.00", "5,000.00", "0.00", "8,000.00",
                    numeric: 2...7)))
    }

    @Test func anEmptyFileSaysSoInEachSection() throws {
        let h = try ProjectionHarness(ReadModels.all, name: "readmodels")
        let html = try F.render(h)
        #expect(html.contains("Nothing was collected from 2026-01-31 to 2026-03-31."))
        #expect(html.contains("No loan is overdue as of 2026-03-31."))
        #expect(html.contains("No agent has been approved yet."))
        #expect(html.contains("No customer owes anything as of 2026-03-31."))
        #expect(html.contains(foot("Total", "0", "0.00", "0.00", "0.00")))
        let document = try XMLDocument(data: Data(html.utf8), options: [])
        #expect(try document.nodes(forXPath: "//svg").count == 1)
    }

    @Test func aStoppedProjectionIsFlagged() throws {
        let h = try F.book()
        // A payment on an invoice that was never created: the read models stop there.
        try h.given(
            .invoicePaymentRecorded(
                InvoicePaymentRecorded(
                    paymentId: "IP9", invoiceId: "I9", amountCents: 100, paidOn: F.date("2026-03-30"), method: .cash,
                    recordedBy: "admin-1", paidTotalCents: 100, balanceCents: 0, status: .paid)),
            stream: "invoice-I9")
        let stop = try #require(h.database.stop)
        let html = try F.render(h)
        #expect(
            html.contains("<p class=\"warning\" role=\"alert\">The read models are stopped: stopped at position 29"))
        #expect(html.contains("read models at position <strong>28</strong>"))
        #expect(stop.position == 29)
    }

    /// A book of more customers owing than the page lists: the 20 owing most are read and listed,
    /// most first, while the totals, the count and the chart are of every customer. The report
    /// used to read every customer into memory and list them all, a page and a process as large
    /// as the book.
    @Test func theCustomersOwingMostAreListedAndEveryCustomerIsTotalled() throws {
        let h = try ProjectionHarness(ReadModels.all, name: "readmodels")
        let owed = (1...45).map { Int64(($0 * 37) % 45 + 1) * 10_000 }  // 10,000 to 450,000, shuffled
        for (n, cents) in owed.enumerated() {
            try F.invoice(
                h, "I\(n)", party: "C-\(n)", name: "Customer \(n)", cents: cents, issued: "2026-01-10",
                due: n % 2 == 0 ? "2026-03-20" : "2026-04-20")
        }
        let figures = try F.figures(h)
        let expected = owed.enumerated().sorted { $0.element > $1.element }.prefix(20).map { "C-\($0.offset)" }
        #expect(figures.owingMost.map(\.partyId) == expected)
        #expect(figures.owingMost.first?.totalCents == 450_000)
        let all = owed.reduce(0, +)
        let late = owed.enumerated().filter { $0.offset % 2 == 0 }.reduce(0) { $0 + $1.element }
        #expect(
            figures.receivablesTotal
                == .init(
                    customers: 45, currentCents: all - late, days1To30Cents: late, days31To60Cents: 0,
                    days61To90Cents: 0, over90DaysCents: 0, totalCents: all))

        let html = try F.render(h)
        #expect(html.contains("<caption>The 20 customers owing most, of 45</caption>"))
        #expect(try XMLDocument(data: Data(html.utf8), options: []).nodes(forXPath: "(//table)[last()]/tbody/tr").count == 20)
        #expect(
            html.contains(
                foot(
                    "Total", "45 customers", MoneyText.of(all - late), MoneyText.of(late), "0.00", "0.00", "0.00",
                    MoneyText.of(all), numeric: 2...7)))
        #expect(html.contains("<div class=\"card-note\">45 customers owing</div>"))
    }

    /// However many rows are offered, and in whatever order, the first `count` come out in order.
    @Test func theFirstRowsAreKeptFromAnyNumberOffered() {
        var top = TopRows<Int>(count: 5, precedes: >)
        let offered = (0..<1000).map { ($0 * 7919) % 1000 }
        for value in offered { top.offer(value) }
        #expect(top.rows == [999, 998, 997, 996, 995])
        var few = TopRows<Int>(count: 5, precedes: >)
        for value in [3, 1, 2] { few.offer(value) }
        #expect(few.rows == [3, 2, 1])
    }

    /// A table row: the first cell a row header, then the figures (right-aligned by default).
    private func row(_ cells: String..., numeric: ClosedRange<Int> = 1...99) -> String {
        "<tr>" + line(cells, numeric: numeric) + "</tr>"
    }

    private func foot(_ cells: String..., numeric: ClosedRange<Int> = 1...99) -> String {
        "<tfoot><tr>" + line(cells, numeric: numeric) + "</tr></tfoot>"
    }

    private func line(_ cells: [String], numeric: ClosedRange<Int>) -> String {
        cells.enumerated().map { index, text in
            let escaped = text.htmlEscaped
            if index == 0 { return "<th scope=\"row\"\(numeric.contains(0) ? " class=\"num\"" : "")>\(escaped)</th>" }
            return numeric.contains(index) ? "<td class=\"num\">\(escaped)</td>" : "<td>\(escaped)</td>"
        }.joined()
    }
}
