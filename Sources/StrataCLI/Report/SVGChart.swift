import Projections
import StrataCore

/// Bar charts as inline SVG for `strata report`: no script, no font or image to fetch.
/// Every bar (or day) carries a `<title>` naming its figure, and each chart sits beside a
/// table of the same numbers, so the report reads without the picture. Coordinates are
/// rounded to a tenth of a pixel, so the same figures always give the same bytes.
enum SVGChart {
    /// One kind of figure in a chart, with its colour and its name in the legend.
    struct Series {
        let name: String
        let colour: String
    }

    /// A labelled group of horizontal bars: one value per series.
    struct Row {
        let label: String
        let values: [Int64]
        /// The colour of a one-series chart's bar when each row has its own (aging buckets).
        var colour: String?
    }

    /// The figures of one day of a column chart, one per series, stacked.
    struct Column {
        let day: LocalDate
        let values: [Int64]
    }

    /// The inner width of a report panel, so a chart fills it at its natural size.
    static let width = 950.0

    /// Horizontal bars, grouped by row, on a common money axis starting at zero.
    static func horizontalBars(id: String, title: String, rows: [Row], series: [Series], axisTitle: String) -> String {
        let labelWidth = 190.0
        let plotLeft = labelWidth
        let plotRight = width - 110
        let barHeight = 16.0
        let barGap = 3.0
        let rowGap = 16.0
        let legend = series.count > 1 ? 30.0 : 0
        let groupHeight = Double(series.count) * barHeight + Double(series.count - 1) * barGap
        let top = legend + 6
        let axisY = top + Double(rows.count) * (groupHeight + rowGap)
        let height = axisY + 46
        let ticks = ticks(upTo: rows.flatMap(\.values).max() ?? 0)
        let scale = (plotRight - plotLeft) / Double(ticks.last ?? 1)

        var svg = open(id: id, title: title, height: height)
        if series.count > 1 { svg += self.legend(series, x: plotLeft, y: 8) }
        for tick in ticks {
            let x = plotLeft + Double(tick) * scale
            svg.append(
                "<line class=\"grid\" x1=\"\(n(x))\" y1=\"\(n(top))\" x2=\"\(n(x))\" y2=\"\(n(axisY))\" />")
            svg.append(
                "<text class=\"tick\" x=\"\(n(x))\" y=\"\(n(axisY + 16))\" text-anchor=\"middle\">"
                    + "\(MoneyText.of(tick))</text>")
        }
        svg.append(
            "<text class=\"axis-title\" x=\"\(n((plotLeft + plotRight) / 2))\" y=\"\(n(axisY + 38))\" "
                + "text-anchor=\"middle\">\(axisTitle.htmlEscaped)</text>")
        for (index, row) in rows.enumerated() {
            let groupTop = top + rowGap / 2 + Double(index) * (groupHeight + rowGap)
            svg.append(
                "<text class=\"label\" x=\"\(n(labelWidth - 10))\" y=\"\(n(groupTop + groupHeight / 2))\" "
                    + "dy=\"0.35em\" text-anchor=\"end\">\(shortened(row.label, to: 28).htmlEscaped)</text>")
            for (position, value) in row.values.enumerated() where position < series.count {
                let y = groupTop + Double(position) * (barHeight + barGap)
                let length = Double(max(value, 0)) * scale
                let colour = series.count == 1 ? row.colour ?? series[0].colour : series[position].colour
                let name = series.count == 1 ? "" : ", " + series[position].name
                svg.append(
                    "<rect x=\"\(n(plotLeft))\" y=\"\(n(y))\" width=\"\(n(length))\" height=\"\(n(barHeight))\" "
                        + "rx=\"2\" fill=\"\(colour)\"><title>\((row.label + name).htmlEscaped): "
                        + "\(MoneyText.of(value))</title></rect>")
                svg.append(
                    "<text class=\"value\" x=\"\(n(plotLeft + length + 6))\" y=\"\(n(y + barHeight / 2))\" "
                        + "dy=\"0.35em\">\(MoneyText.of(value))</text>")
            }
        }
        svg.append(
            "<line class=\"axis\" x1=\"\(n(plotLeft))\" y1=\"\(n(top))\" x2=\"\(n(plotLeft))\" y2=\"\(n(axisY))\" />")
        svg.append("</svg>")
        return svg.joined(separator: "\n")
    }

    /// Stacked columns, one slot per calendar day from `first` through `last` (a day
    /// without figures stays empty, so gaps show), on a money axis starting at zero.
    static func dailyColumns(
        id: String, title: String, first: LocalDate, last: LocalDate, columns: [Column], series: [Series],
        valueTitle: String, dayTitle: String
    ) -> String {
        let plotLeft = 104.0
        let plotRight = width - 16
        let top = 40.0
        let axisY = 250.0
        let height = axisY + 52
        let days = max(first.days(until: last) + 1, 1)
        let slot = (plotRight - plotLeft) / Double(days)
        let barWidth = min(slot * 0.72, 36)
        let ticks = ticks(upTo: columns.map { $0.values.reduce(0) { $0 + max($1, 0) } }.max() ?? 0)
        let scale = (axisY - top) / Double(ticks.last ?? 1)

        var svg = open(id: id, title: title, height: height)
        svg += legend(series, x: plotLeft, y: 10)
        for tick in ticks {
            let y = axisY - Double(tick) * scale
            svg.append(
                "<line class=\"grid\" x1=\"\(n(plotLeft))\" y1=\"\(n(y))\" x2=\"\(n(plotRight))\" y2=\"\(n(y))\" />")
            svg.append(
                "<text class=\"tick\" x=\"\(n(plotLeft - 8))\" y=\"\(n(y))\" dy=\"0.35em\" text-anchor=\"end\">"
                    + "\(MoneyText.of(tick))</text>")
        }
        svg.append(
            "<text class=\"axis-title\" transform=\"rotate(-90)\" x=\"\(n(-(top + axisY) / 2))\" y=\"14\" "
                + "text-anchor=\"middle\">\(valueTitle.htmlEscaped)</text>")
        let every = max(1, (days + 9) / 10)
        for offset in stride(from: 0, to: days, by: every) {
            let x = plotLeft + (Double(offset) + 0.5) * slot
            let day = first.adding(days: offset).description
            svg.append(
                "<line class=\"axis\" x1=\"\(n(x))\" y1=\"\(n(axisY))\" x2=\"\(n(x))\" y2=\"\(n(axisY + 4))\" />")
            svg.append(
                "<text class=\"tick\" x=\"\(n(x))\" y=\"\(n(axisY + 17))\" text-anchor=\"middle\">"
                    + "\(day.dropFirst(5))</text>")
        }
        svg.append(
            "<text class=\"axis-title\" x=\"\(n((plotLeft + plotRight) / 2))\" y=\"\(n(axisY + 42))\" "
                + "text-anchor=\"middle\">\(dayTitle.htmlEscaped)</text>")
        for column in columns where column.day >= first && column.day <= last {
            let x = plotLeft + Double(first.days(until: column.day)) * slot + (slot - barWidth) / 2
            let parts = zip(series, column.values).map { "\($0.name) \(MoneyText.of($1))" }
            let total = column.values.reduce(0, +)
            svg.append(
                "<g><title>\(column.day): \(parts.joined(separator: ", ").htmlEscaped), "
                    + "total \(MoneyText.of(total))</title>")
            var base = axisY
            for (value, kind) in zip(column.values, series) where value > 0 {
                let length = Double(value) * scale
                base -= length
                svg.append(
                    "<rect x=\"\(n(x))\" y=\"\(n(base))\" width=\"\(n(barWidth))\" height=\"\(n(length))\" "
                        + "fill=\"\(kind.colour)\" />")
            }
            svg.append("</g>")
        }
        svg.append(
            "<line class=\"axis\" x1=\"\(n(plotLeft))\" y1=\"\(n(axisY))\" x2=\"\(n(plotRight))\" y2=\"\(n(axisY))\" />"
        )
        svg.append("</svg>")
        return svg.joined(separator: "\n")
    }

    /// Axis ticks from zero past `maximum` (in cents), four or five of them, each a round
    /// step: 1, 2, 2.5 or 5 times a power of ten.
    static func ticks(upTo maximum: Int64) -> [Int64] {
        let top = max(maximum, 100)
        let rough = (top + 3) / 4
        var magnitude: Int64 = 1
        while magnitude <= rough / 10 { magnitude *= 10 }
        let candidates = [magnitude, 2 * magnitude, 5 * magnitude / 2, 5 * magnitude, 10 * magnitude]
        let step = candidates.filter { $0 >= rough }.min() ?? 10 * magnitude
        let count = (top + step - 1) / step
        return (0...count).map { $0 * step }
    }

    private static func open(id: String, title: String, height: Double) -> [String] {
        [
            "<svg class=\"chart\" id=\"\(id)\" viewBox=\"0 0 \(n(width)) \(n(height))\" width=\"\(n(width))\" "
                + "height=\"\(n(height))\" role=\"img\" aria-labelledby=\"\(id)-title\">",
            "<title id=\"\(id)-title\">\(title.htmlEscaped)</title>",
        ]
    }

    private static func legend(_ series: [Series], x: Double, y: Double) -> [String] {
        var svg: [String] = []
        var left = x
        for kind in series {
            svg.append(
                "<rect x=\"\(n(left))\" y=\"\(n(y))\" width=\"12\" height=\"12\" rx=\"2\" fill=\"\(kind.colour)\" />")
            svg.append(
                "<text class=\"legend\" x=\"\(n(left + 18))\" y=\"\(n(y + 6))\" dy=\"0.35em\">"
                    + "\(kind.name.htmlEscaped)</text>")
            left += 30 + Double(kind.name.count) * 7
        }
        return svg
    }

    /// A label cut to fit beside the bars; the bar's title keeps it whole.
    private static func shortened(_ label: String, to length: Int) -> String {
        label.count <= length ? label : String(label.prefix(length - 1)) + "…"
    }

    /// A coordinate to a tenth of a pixel, without a trailing ".0".
    private static func n(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        let sign = tenths < 0 ? "-" : ""
        let whole = abs(tenths) / 10
        let fraction = abs(tenths) % 10
        return sign + String(whole) + (fraction == 0 ? "" : "." + String(fraction))
    }
}
