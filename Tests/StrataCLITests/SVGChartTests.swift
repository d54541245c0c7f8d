import Testing

@testable import StrataCLI

@Suite struct SVGChartTests {
    @Test func axisTicksAreRoundStepsFromZeroPastTheLargestValue() {
        #expect(SVGChart.ticks(upTo: 0) == [0, 25, 50, 75, 100])
        #expect(SVGChart.ticks(upTo: 100_000) == [0, 25_000, 50_000, 75_000, 100_000])
        #expect(SVGChart.ticks(upTo: 1_060_000) == [0, 500_000, 1_000_000, 1_500_000])
        #expect(SVGChart.ticks(upTo: 2_697_189) == [0, 1_000_000, 2_000_000, 3_000_000])
        #expect(SVGChart.ticks(upTo: 4_500_000) == [0, 2_000_000, 4_000_000, 6_000_000])
    }

    @Test func barLengthsAreProportionalOnTheAxis() {
        // The plot runs from x 190 to 840 (650 px) for the axis 0 to 1,000.00.
        let svg = SVGChart.horizontalBars(
            id: "c", title: "Two bars",
            rows: [SVGChart.Row(label: "a", values: [50_000]), SVGChart.Row(label: "b", values: [100_000])],
            series: [SVGChart.Series(name: "Owed", colour: "#123456")], axisTitle: "Owed")
        #expect(
            svg.contains(
                "<rect x=\"190\" y=\"14\" width=\"325\" height=\"16\" rx=\"2\" fill=\"#123456\"><title>a: 500.00"))
        #expect(
            svg.contains(
                "<rect x=\"190\" y=\"46\" width=\"650\" height=\"16\" rx=\"2\" fill=\"#123456\"><title>b: 1,000.00"))
        #expect(svg.contains("<text class=\"tick\" x=\"515\" y=\"86\" text-anchor=\"middle\">500.00</text>"))
        #expect(svg.hasPrefix("<svg class=\"chart\" id=\"c\" viewBox=\"0 0 950 116\""))
    }

    @Test func columnsStackOnTheirDayAndLeaveGapsForDaysWithout() {
        // 10 days, 83 px each; the axis is 0 to 40.00 over 210 px.
        let svg = SVGChart.dailyColumns(
            id: "d", title: "Days", first: .init("2026-03-01")!, last: .init("2026-03-10")!,
            columns: [.init(day: .init("2026-03-03")!, values: [3_000, 1_000])],
            series: [.init(name: "Loans", colour: "#111111"), .init(name: "Invoices", colour: "#222222")],
            valueTitle: "Collected", dayTitle: "Day")
        #expect(svg.contains("<g><title>2026-03-03: Loans 30.00, Invoices 10.00, total 40.00</title>"))
        #expect(svg.contains("<rect x=\"293.5\" y=\"92.5\" width=\"36\" height=\"157.5\" fill=\"#111111\" />"))
        #expect(svg.contains("<rect x=\"293.5\" y=\"40\" width=\"36\" height=\"52.5\" fill=\"#222222\" />"))
    }
}
