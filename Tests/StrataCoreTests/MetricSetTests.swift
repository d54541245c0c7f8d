import StrataCore
import Testing

@Suite("Metrics: the Prometheus text exposition")
struct MetricSetTests {
    @Test func rendersFamiliesInOrderWithEscapedLabelsAndCumulativeBuckets() {
        var metrics = MetricSet()
        let commands = metrics.counter(
            "strata_test_commands_total", help: "Commands, \"quoted\", a back\\slash\nand a second line.",
            labels: ["type", "outcome"])
        let head = metrics.gauge("strata_test_head_position", help: "The head.")
        let batch = metrics.histogram("strata_test_batch_commands", help: "Per batch.", buckets: [1, 2.5, 10])
        metrics.add(commands, 2, labels: ["RequestLoan", "accepted"])
        metrics.add(commands, labels: ["A\"B", "back\\slash\nnew line"])
        metrics.add(commands, labels: ["RequestLoan", "accepted"])
        metrics.set(head, 42)
        for value in [1.0, 2, 2.5, 11] { metrics.observe(batch, value) }
        metrics.observe(batch, 0.5, count: 2)

        #expect(
            metrics.rendered() == """
                # HELP strata_test_commands_total Commands, "quoted", a back\\\\slash\\nand a second line.
                # TYPE strata_test_commands_total counter
                strata_test_commands_total{type="A\\"B",outcome="back\\\\slash\\nnew line"} 1
                strata_test_commands_total{type="RequestLoan",outcome="accepted"} 3
                # HELP strata_test_head_position The head.
                # TYPE strata_test_head_position gauge
                strata_test_head_position 42
                # HELP strata_test_batch_commands Per batch.
                # TYPE strata_test_batch_commands histogram
                strata_test_batch_commands_bucket{le="1"} 3
                strata_test_batch_commands_bucket{le="2.5"} 5
                strata_test_batch_commands_bucket{le="10"} 5
                strata_test_batch_commands_bucket{le="+Inf"} 6
                strata_test_batch_commands_sum 17.5
                strata_test_batch_commands_count 6

                """)
    }

    @Test func aFamilyWithoutLabelsStartsAtZeroAndOneWithLabelsHasNoSeriesUntilUsed() {
        var metrics = MetricSet()
        _ = metrics.counter("strata_a_total", help: "A.")
        _ = metrics.counter("strata_b_total", help: "B.", labels: ["code"])
        _ = metrics.histogram("strata_c_seconds", help: "C.", buckets: [0.0005, 0.25])
        #expect(
            metrics.rendered() == """
                # HELP strata_a_total A.
                # TYPE strata_a_total counter
                strata_a_total 0
                # HELP strata_b_total B.
                # TYPE strata_b_total counter
                # HELP strata_c_seconds C.
                # TYPE strata_c_seconds histogram
                strata_c_seconds_bucket{le="0.0005"} 0
                strata_c_seconds_bucket{le="0.25"} 0
                strata_c_seconds_bucket{le="+Inf"} 0
                strata_c_seconds_sum 0
                strata_c_seconds_count 0

                """)
    }

    @Test func aLabelledHistogramPutsLeLastAndAValueOnABoundCountsInThatBucket() {
        var metrics = MetricSet()
        let lag = metrics.histogram("strata_lag_seconds", help: "Lag.", labels: ["projection"], buckets: [0.1, 1])
        metrics.observe(lag, 0.1, labels: ["readmodels"])
        metrics.observe(lag, 1.5, labels: ["audit"])
        #expect(
            metrics.rendered() == """
                # HELP strata_lag_seconds Lag.
                # TYPE strata_lag_seconds histogram
                strata_lag_seconds_bucket{projection="audit",le="0.1"} 0
                strata_lag_seconds_bucket{projection="audit",le="1"} 0
                strata_lag_seconds_bucket{projection="audit",le="+Inf"} 1
                strata_lag_seconds_sum{projection="audit"} 1.5
                strata_lag_seconds_count{projection="audit"} 1
                strata_lag_seconds_bucket{projection="readmodels",le="0.1"} 1
                strata_lag_seconds_bucket{projection="readmodels",le="1"} 1
                strata_lag_seconds_bucket{projection="readmodels",le="+Inf"} 1
                strata_lag_seconds_sum{projection="readmodels"} 0.1
                strata_lag_seconds_count{projection="readmodels"} 1

                """)
    }

    @Test func numbersAreWrittenAsPrometheusClientsWriteThem() {
        #expect(MetricSet.number(0) == "0")
        #expect(MetricSet.number(-3) == "-3")
        #expect(MetricSet.number(1_700_000_000) == "1700000000")
        #expect(MetricSet.number(1_700_000_000.25) == "1700000000.25")
        #expect(MetricSet.number(0.005) == "0.005")
        #expect(MetricSet.number(2.5e-05) == "2.5e-05")
        #expect(MetricSet.number(1e20) == "1e+20")
        #expect(MetricSet.number(.infinity) == "+Inf")
        #expect(MetricSet.number(-.infinity) == "-Inf")
        #expect(MetricSet.number(.nan) == "NaN")
    }

    @Test func escaping() {
        #expect(MetricSet.escapedLabelValue(#"a"b\c"# + "\nd") == #"a\"b\\c\nd"#)
        #expect(MetricSet.escapedHelp(#"a"b\c"# + "\nd") == #"a"b\\c\nd"#)
        #expect(MetricSet.escapedLabelValue("plain é ✓") == "plain é ✓")
    }

    @Test func gaugesAreSetAndReadBack() {
        var metrics = MetricSet()
        let position = metrics.gauge("strata_position", help: "P.", labels: ["projection"])
        #expect(metrics.value(position, labels: ["audit"]) == nil)
        metrics.set(position, 7, labels: ["audit"])
        metrics.set(position, 5, labels: ["audit"])
        #expect(metrics.value(position, labels: ["audit"]) == 5)
    }

    @Test func theRegistryRendersACopyTakenUnderItsLock() {
        let registry = MetricsRegistry()
        let counter = registry.update { $0.counter("strata_x_total", help: "X.") }
        registry.update { $0.add(counter, 3) }
        let before = registry.snapshot
        registry.update { $0.add(counter, 1) }
        #expect(before.rendered().hasSuffix("strata_x_total 3\n"))
        #expect(registry.rendered().hasSuffix("strata_x_total 4\n"))
    }
}
