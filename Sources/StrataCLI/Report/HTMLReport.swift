import Projections
import StrataCore

/// `strata report --html`: the read models as one self-contained page for an analyst.
///
/// One file with its CSS and SVG inline and no script, image, font or link to fetch, so it
/// can be mailed, archived or opened offline and always looks the same. The markup is also
/// well-formed XML (void elements closed, every name escaped), so tools can parse it. The
/// same figures and `generatedAt` always give the same bytes.
enum HTMLReport {
    /// The most rows a chart draws.
    static let chartRows = 15

    private enum Colour {
        static let loans = "#2f6fd0"
        static let invoices = "#f2a541"
        static let principal = "#2f6fd0"
        static let outstanding = "#9cc0f0"
        static let overdue = "#d9534f"
        static let collected = "#2f9e6f"
        static let notDue = "#5cb38a"
        static let buckets = ["#f6c453", "#f08c3a", "#d9534f", "#8e2c2a"]
    }

    static func render(_ figures: ReportFigures, generatedAt: Timestamp) -> String {
        let title = "Strata report as of \(figures.asOf)"
        var html = [
            "<!DOCTYPE html>",
            "<html lang=\"en\">",
            "<head>",
            "<meta charset=\"utf-8\" />",
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />",
            "<title>\(title.htmlEscaped)</title>",
            "<style>\(style)</style>",
            "</head>",
            "<body>",
            "<main>",
            "<header>",
            "<h1>Lending and invoicing report</h1>",
            "<p class=\"meta\">As of <strong>\(figures.asOf)</strong> · read models at position "
                + "<strong>\(figures.position)</strong> · generated \(generatedAt)</p>",
            "<p class=\"meta\">Amounts are in the currency of the books, with two decimals. Aging, overdue "
                + "loans and collections are as of the date; every other figure is as of the position.</p>",
            "</header>",
        ]
        if let stop = figures.stop {
            html.append(
                "<p class=\"warning\" role=\"alert\">The read models are stopped: \(stop.description.htmlEscaped). "
                    + "The figures are those of the events before it.</p>")
        }
        if let difference = figures.notTheStores {
            html.append(
                "<p class=\"warning\" role=\"alert\">The read models are not this store&#39;s history: "
                    + "\(difference.htmlEscaped).</p>")
        }
        html += headline(figures)
        html += portfolio(figures)
        html += collections(figures)
        html += overdue(figures)
        html += agents(figures)
        html += receivables(figures)
        html += [
            "<footer>strata report · readmodels.db at position \(figures.position) · as of \(figures.asOf) · "
                + "no scripts, no external resources</footer>",
            "</main>",
            "</body>",
            "</html>",
        ]
        return html.joined(separator: "\n") + "\n"
    }

    // MARK: - Sections

    private static func headline(_ figures: ReportFigures) -> [String] {
        let h = figures.headline
        let overdueCents = figures.overdue.reduce(0) { $0 + $1.overdueCents }
        let overdueLoans = figures.overdue.reduce(0) { $0 + $1.loans }
        let owedCents = figures.receivablesTotal.totalCents
        let cards: [(String, String, String)] = [
            ("Collected", MoneyText.of(h.collectedCents), "every loan payment received"),
            ("Still to collect", MoneyText.of(h.collectibleCents), plural(h.activeLoans, "active loan")),
            ("Released", MoneyText.of(h.principalReleasedCents), plural(h.loansReleased, "loan") + " approved"),
            ("Overdue", MoneyText.of(overdueCents), plural(Int64(overdueLoans), "loan") + " late"),
            ("Receivables", MoneyText.of(owedCents), plural(Int64(figures.receivablesTotal.customers), "customer") + " owing"),
            ("Active accounts", String(h.activeAccounts), "borrower accounts"),
            ("Agents", String(h.approvedAgents), "approved; \(h.pendingAgents) waiting"),
            ("Pending approvals", String(h.pendingApprovals), "agents, loans and cash-outs"),
        ]
        return ["<section class=\"cards\" aria-label=\"Headline figures\">"]
            + cards.map { label, value, note in
                "<div class=\"card\"><div class=\"card-label\">\(label)</div>"
                    + "<div class=\"card-value\">\(value)</div><div class=\"card-note\">\(note)</div></div>"
            } + ["</section>"]
    }

    private static func portfolio(_ figures: ReportFigures) -> [String] {
        let lines = figures.portfolio
        var html = open("portfolio", "Portfolio by status", "Every loan ever requested, by where it stands now.")
        let chart = SVGChart.horizontalBars(
            id: "portfolio-chart", title: "Principal and outstanding by loan status",
            rows: lines.map {
                SVGChart.Row(
                    label: "\(statusName($0.status)) · \(plural($0.loans, "loan"))",
                    values: [$0.principalCents, $0.outstandingCents])
            },
            series: [
                SVGChart.Series(name: "Principal", colour: Colour.principal),
                SVGChart.Series(name: "Outstanding", colour: Colour.outstanding),
            ], axisTitle: "Amount")
        html.append(chart)
        html.append(
            table(
                caption: "Loans by status",
                head: ["Status", "Loans", "Principal", "Paid", "Outstanding"],
                rows: lines.map {
                    [
                        statusName($0.status), String($0.loans), MoneyText.of($0.principalCents),
                        MoneyText.of($0.paidCents), MoneyText.of($0.outstandingCents),
                    ]
                },
                foot: [
                    "Total", String(lines.reduce(0) { $0 + $1.loans }),
                    MoneyText.of(lines.reduce(0) { $0 + $1.principalCents }),
                    MoneyText.of(lines.reduce(0) { $0 + $1.paidCents }),
                    MoneyText.of(lines.reduce(0) { $0 + $1.outstandingCents }),
                ]))
        return html + ["</section>"]
    }

    private static func collections(_ figures: ReportFigures) -> [String] {
        let days = figures.collections
        var html = open(
            "collections", "Collections over time",
            "Money received per day it was paid, loans and invoices, over the \(ReportFigures.collectionsDays) "
                + "days to \(figures.asOf).")
        guard !days.isEmpty else {
            html.append(
                "<p class=\"empty\">Nothing was collected from \(figures.collectionsFrom) to \(figures.asOf).</p>")
            return html + ["</section>"]
        }
        let loans = days.reduce(0) { $0 + $1.loanCollectedCents }
        let invoices = days.reduce(0) { $0 + $1.invoiceCollectedCents }
        html.append(
            "<p>\(MoneyText.of(loans + invoices)) collected on \(plural(Int64(days.count), "day")) from "
                + "\(figures.collectionsFrom) to \(figures.asOf): \(MoneyText.of(loans)) on loans, "
                + "\(MoneyText.of(invoices)) on invoices.</p>")
        html.append(
            SVGChart.dailyColumns(
                // The whole window, so that days with nothing collected show as gaps, not as a shorter axis.
                id: "collections-chart", title: "Collected per day, loans and invoices",
                first: figures.collectionsFrom, last: figures.asOf,
                columns: days.compactMap { day in
                    LocalDate(day.day).map {
                        SVGChart.Column(day: $0, values: [day.loanCollectedCents, day.invoiceCollectedCents])
                    }
                },
                series: [
                    SVGChart.Series(name: "Loans", colour: Colour.loans),
                    SVGChart.Series(name: "Invoices", colour: Colour.invoices),
                ], valueTitle: "Collected", dayTitle: "Day paid (month-day)"))
        html.append("<details>")
        html.append("<summary>The figures, day by day</summary>")
        html.append(
            table(
                caption: "Collections per day",
                head: ["Day", "Loan payments", "Loans", "Invoice payments", "Invoices", "Total"],
                rows: days.map {
                    [
                        $0.day, String($0.loanPayments), MoneyText.of($0.loanCollectedCents),
                        String($0.invoicePayments), MoneyText.of($0.invoiceCollectedCents),
                        MoneyText.of($0.totalCollectedCents),
                    ]
                },
                foot: [
                    "Total", String(days.reduce(0) { $0 + $1.loanPayments }), MoneyText.of(loans),
                    String(days.reduce(0) { $0 + $1.invoicePayments }), MoneyText.of(invoices),
                    MoneyText.of(loans + invoices),
                ]))
        html.append("</details>")
        return html + ["</section>"]
    }

    private static func overdue(_ figures: ReportFigures) -> [String] {
        let buckets = figures.overdue
        var html = open(
            "overdue", "Overdue loans by days past due",
            "Active loans whose oldest unpaid installment fell due before \(figures.asOf): what is overdue on "
                + "them, and everything still owed on them.")
        if figures.mostOverdue.isEmpty {
            html.append("<p class=\"empty\">No loan is overdue as of \(figures.asOf).</p>")
        } else {
            html.append(
                SVGChart.horizontalBars(
                    id: "overdue-chart", title: "Overdue and outstanding by days past due",
                    rows: buckets.map {
                        SVGChart.Row(
                            label: "\(bucketName($0.bucket)) · \(plural(Int64($0.loans), "loan"))",
                            values: [$0.overdueCents, $0.outstandingCents])
                    },
                    series: [
                        SVGChart.Series(name: "Overdue", colour: Colour.overdue),
                        SVGChart.Series(name: "Outstanding", colour: Colour.outstanding),
                    ], axisTitle: "Amount"))
        }
        html.append(
            table(
                caption: "Aging buckets",
                head: ["Days past due", "Loans", "Overdue", "Outstanding"],
                rows: buckets.map {
                    [
                        bucketName($0.bucket), String($0.loans), MoneyText.of($0.overdueCents),
                        MoneyText.of($0.outstandingCents),
                    ]
                },
                foot: [
                    "Total", String(buckets.reduce(0) { $0 + $1.loans }),
                    MoneyText.of(buckets.reduce(0) { $0 + $1.overdueCents }),
                    MoneyText.of(buckets.reduce(0) { $0 + $1.outstandingCents }),
                ]))
        if !figures.mostOverdue.isEmpty {
            let listed = figures.mostOverdue
            let late = buckets.reduce(0) { $0 + $1.loans }
            let caption = listed.count < late ? "The \(listed.count) most overdue of \(late) loans" : "The overdue loans"
            html.append(
                table(
                    caption: caption,
                    head: ["Loan", "Account", "Agent", "Oldest due", "Days", "Overdue", "Outstanding"],
                    rows: listed.map {
                        [
                            $0.loanId, $0.accountId, $0.agentId, $0.oldestDueDate.description, String($0.daysOverdue),
                            MoneyText.of($0.overdueCents), MoneyText.of($0.outstandingCents),
                        ]
                    }, numeric: [4, 5, 6]))
        }
        return html + ["</section>"]
    }

    private static func agents(_ figures: ReportFigures) -> [String] {
        let agents = figures.agents
        var html = open(
            "agents", "Agent performance",
            "What each approved agent lent and collected on the loans of their accounts, and the commission "
                + "earned on it.")
        guard !agents.isEmpty else {
            html.append("<p class=\"empty\">No agent has been approved yet.</p>")
            return html + ["</section>"]
        }
        let charted = agents.prefix(chartRows)
        html.append(
            SVGChart.horizontalBars(
                id: "agents-chart",
                title: charted.count < agents.count
                    ? "Collected by agent, the \(charted.count) best of \(agents.count)" : "Collected by agent",
                rows: charted.map { SVGChart.Row(label: agentName($0), values: [$0.collectedCents]) },
                series: [SVGChart.Series(name: "Collected", colour: Colour.collected)], axisTitle: "Collected"))
        html.append(
            table(
                caption: "Agents, best collectors first",
                head: [
                    "Agent", "Username", "Loans", "Released", "Principal released", "Collected", "Earned",
                    "Collectible",
                ],
                rows: agents.map {
                    [
                        $0.agentId, $0.username ?? "", String($0.loansRequested), String($0.loansReleased),
                        MoneyText.of($0.principalReleasedCents), MoneyText.of($0.collectedCents),
                        MoneyText.of($0.earnedCents), MoneyText.of($0.collectibleCents),
                    ]
                },
                foot: [
                    "Total", "", String(agents.reduce(0) { $0 + $1.loansRequested }),
                    String(agents.reduce(0) { $0 + $1.loansReleased }),
                    MoneyText.of(agents.reduce(0) { $0 + $1.principalReleasedCents }),
                    MoneyText.of(agents.reduce(0) { $0 + $1.collectedCents }),
                    MoneyText.of(agents.reduce(0) { $0 + $1.earnedCents }),
                    MoneyText.of(agents.reduce(0) { $0 + $1.collectibleCents }),
                ], numeric: [2, 3, 4, 5, 6, 7]))
        return html + ["</section>"]
    }

    private static func receivables(_ figures: ReportFigures) -> [String] {
        let customers = figures.owingMost
        let total = figures.receivablesTotal
        var html = open(
            "receivables", "Receivables",
            "What invoice customers owed on \(figures.asOf), by days past each invoice's due date.")
        guard !customers.isEmpty else {
            html.append("<p class=\"empty\">No customer owes anything as of \(figures.asOf).</p>")
            return html + ["</section>"]
        }
        let totals: [Int64] = [
            total.currentCents, total.days1To30Cents, total.days31To60Cents, total.days61To90Cents,
            total.over90DaysCents, total.totalCents,
        ]
        let names = ["Not yet due", "1–30 days", "31–60 days", "61–90 days", "Over 90 days"]
        let colours = [Colour.notDue] + Colour.buckets
        html.append(
            SVGChart.horizontalBars(
                id: "receivables-chart", title: "Receivables by days past due",
                rows: (0..<5).map { SVGChart.Row(label: names[$0], values: [totals[$0]], colour: colours[$0]) },
                series: [SVGChart.Series(name: "Owed", colour: Colour.notDue)], axisTitle: "Owed"))
        html.append(
            table(
                caption: customers.count < total.customers
                    ? "The \(customers.count) customers owing most, of \(total.customers)"
                    : "Receivables by customer, owing most first",
                head: ["Customer", "Party", "Not due", "1–30", "31–60", "61–90", "Over 90", "Total"],
                rows: customers.map {
                    [
                        $0.name, $0.partyId, MoneyText.of($0.currentCents), MoneyText.of($0.days1To30Cents),
                        MoneyText.of($0.days31To60Cents), MoneyText.of($0.days61To90Cents),
                        MoneyText.of($0.over90DaysCents), MoneyText.of($0.totalCents),
                    ]
                },
                foot: ["Total", plural(Int64(total.customers), "customer")] + totals.map(MoneyText.of),
                numeric: [2, 3, 4, 5, 6, 7]))
        return html + ["</section>"]
    }

    // MARK: - Pieces

    private static func open(_ id: String, _ title: String, _ lede: String) -> [String] {
        [
            "<section class=\"panel\" id=\"\(id)\" aria-labelledby=\"\(id)-heading\">",
            "<h2 id=\"\(id)-heading\">\(title.htmlEscaped)</h2>",
            "<p class=\"lede\">\(lede.htmlEscaped)</p>",
        ]
    }

    /// A table of plain text cells (escaped here); columns in `numeric` are right-aligned
    /// figures (by default every column but the first).
    private static func table(
        caption: String, head: [String], rows: [[String]], foot: [String]? = nil, numeric: Set<Int>? = nil
    ) -> String {
        let numeric = numeric ?? Set(1..<head.count)
        func cells(_ row: [String], tag: String) -> String {
            row.enumerated().map { index, text in
                let element = index == 0 && tag == "td" ? "th" : tag
                let scope = element == "th" && tag == "td" ? " scope=\"row\"" : ""
                let numericClass = numeric.contains(index) ? " class=\"num\"" : ""
                return "<\(element)\(scope)\(numericClass)>\(text.htmlEscaped)</\(element)>"
            }.joined()
        }
        var html = ["<table>", "<caption>\(caption.htmlEscaped)</caption>"]
        html.append(
            "<thead><tr>"
                + head.enumerated().map { index, text in
                    "<th scope=\"col\"\(numeric.contains(index) ? " class=\"num\"" : "")>\(text.htmlEscaped)</th>"
                }.joined() + "</tr></thead>")
        html.append("<tbody>")
        html += rows.map { "<tr>" + cells($0, tag: "td") + "</tr>" }
        html.append("</tbody>")
        if let foot { html.append("<tfoot><tr>" + cells(foot, tag: "td") + "</tr></tfoot>") }
        html.append("</table>")
        return html.joined(separator: "\n")
    }

    private static func statusName(_ status: String) -> String {
        switch status {
        case "PENDING_APPROVAL": "Pending approval"
        case "ACTIVE": "Active"
        case "CLOSED": "Closed"
        case "REJECTED": "Rejected"
        default: status
        }
    }

    private static func bucketName(_ bucket: OverdueAging.Bucket) -> String {
        switch bucket {
        case .days1to30: "1–30 days"
        case .days31to60: "31–60 days"
        case .days61to90: "61–90 days"
        case .over90: "Over 90 days"
        }
    }

    private static func agentName(_ agent: ReportFigures.AgentLine) -> String {
        guard let username = agent.username, username != agent.agentId else { return agent.agentId }
        return "\(agent.agentId) (\(username))"
    }

    private static func plural(_ count: Int64, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }

    private static let style = """

        :root { --ink: #1f2933; --muted: #616e7c; --line: #e4e7eb; --rule: #cbd2d9; --accent: #2f6fd0; }
        * { box-sizing: border-box; }
        body { margin: 0; background: #f2f4f7; color: var(--ink);
          font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "DejaVu Sans",
            sans-serif; }
        main { max-width: 1000px; margin: 0 auto; padding: 32px 24px 40px; }
        h1 { font-size: 26px; line-height: 1.2; margin: 0 0 6px; letter-spacing: -0.01em; }
        h2 { font-size: 18px; margin: 0 0 2px; }
        .meta { color: var(--muted); margin: 0; }
        .lede { color: var(--muted); margin: 0 0 12px; }
        .cards { display: grid; grid-template-columns: repeat(4, minmax(0, 1fr)); gap: 12px; margin-top: 20px; }
        .card, .panel { background: #fff; border: 1px solid var(--line); border-radius: 10px; }
        .card { padding: 12px 16px; }
        .card-label { font-size: 12px; text-transform: uppercase; letter-spacing: 0.06em; color: var(--muted); }
        .card-value { font-size: 22px; font-weight: 600; font-variant-numeric: tabular-nums; }
        .card-note { font-size: 12px; color: var(--muted); }
        .panel { padding: 20px 24px; margin-top: 20px; }
        svg.chart { display: block; max-width: 100%; height: auto; margin: 8px 0 16px; }
        svg text { font-family: inherit; font-size: 11px; fill: #3e4c59; }
        svg .label { font-size: 12px; fill: var(--ink); }
        svg .legend { font-size: 12px; }
        svg .value { fill: #52606d; }
        svg .axis-title { fill: var(--muted); font-weight: 600; }
        svg .grid { stroke: var(--line); stroke-width: 1; }
        svg .axis { stroke: #9aa5b1; stroke-width: 1; }
        table { width: 100%; border-collapse: collapse; font-size: 13px; margin: 8px 0 4px; }
        caption { text-align: left; font-weight: 600; padding: 4px 0 6px; }
        th, td { padding: 5px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
        thead th { font-size: 12px; font-weight: 600; color: var(--muted); border-bottom: 2px solid var(--rule); }
        tbody th { font-weight: 500; }
        .num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
        tfoot th, tfoot td { font-weight: 600; border-top: 2px solid var(--rule); border-bottom: none; }
        tbody tr:nth-child(even) { background: #f9fafb; }
        details summary { cursor: pointer; color: var(--accent); margin: 4px 0 8px; }
        .warning { background: #fff4e5; border: 1px solid #f0b429; border-radius: 8px; padding: 10px 14px; }
        .empty { color: var(--muted); font-style: italic; }
        footer { color: var(--muted); font-size: 12px; margin-top: 24px; text-align: center; }
        @media (max-width: 720px) { .cards { grid-template-columns: repeat(2, minmax(0, 1fr)); } }
        @media print { body { background: #fff; } .panel, .card { break-inside: avoid; } }

        """
}
