import StrataCore
import Testing

/// The strict reader the metrics tests rely on refuses what the format forbids, so a file it
/// accepts is one a Prometheus parser accepts too.
@Suite struct ExpositionReaderTests {
    static let valid = """
        # HELP a_total A "help" with a \\\\ and a \\n.
        # TYPE a_total counter
        a_total{code="x\\"y\\\\z\\n"} 3
        # TYPE h histogram
        h_bucket{le="1"} 1
        h_bucket{le="+Inf"} 2
        h_sum 7.5
        h_count 2

        """

    @Test func readsWhatTheFormatAllows() throws {
        let exposition = try Exposition(Self.valid)
        #expect(exposition.help["a_total"] == "A \"help\" with a \\ and a \n.")
        #expect(exposition.value("a_total", ["code": "x\"y\\z\n"]) == 3)
        #expect(exposition.value("h_bucket", ["le": "+Inf"]) == 2)
        #expect(exposition.types == ["a_total": "counter", "h": "histogram"])
    }

    @Test(arguments: [
        ("no final line feed", "# TYPE a gauge\na 1"),
        ("a sample before its TYPE", "a 1\n# TYPE a gauge\n"),
        ("a comment", "# TYPE a gauge\n# just saying\na 1\n"),
        ("an empty line", "# TYPE a gauge\n\na 1\n"),
        ("a timestamp", "# TYPE a gauge\na 1 1700000000\n"),
        ("an unquoted label", "# TYPE a gauge\na{x=1} 1\n"),
        ("an unknown escape", "# TYPE a gauge\na{x=\"\\t\"} 1\n"),
        ("a trailing comma", "# TYPE a gauge\na{x=\"1\",} 1\n"),
        ("a repeated label", "# TYPE a gauge\na{x=\"1\",x=\"2\"} 1\n"),
        ("a duplicate series", "# TYPE a gauge\na 1\na 2\n"),
        ("a split family", "# TYPE a gauge\n# TYPE b gauge\na 1\nb 1\na{x=\"1\"} 1\n"),
        ("a counter without _total", "# TYPE a counter\na 1\n"),
        ("a negative counter", "# TYPE a_total counter\na_total -1\n"),
        ("a value that is no number", "# TYPE a gauge\na one\n"),
        ("buckets that go down", "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n"),
        ("no +Inf bucket", "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n"),
        ("a count other than +Inf's", "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 2\n"),
        ("no sum", "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n"),
    ])
    func refuses(_ what: String, _ text: String) {
        #expect(throws: Exposition.Problem.self, "\(what)") { try Exposition(text) }
    }

    @Test func whatTheRendererWritesReadsBack() throws {
        var metrics = MetricSet()
        let commands = metrics.counter("strata_c_total", help: "C \"q\" \\ x", labels: ["type", "outcome"])
        let lag = metrics.histogram("strata_l_seconds", help: "L.", labels: ["projection"], buckets: [0.001, 1])
        metrics.add(commands, 5, labels: ["T\"\\\n", "accepted"])
        metrics.observe(lag, 0.5, labels: ["audit"])
        let exposition = try Exposition(metrics.rendered())
        #expect(exposition.value("strata_c_total", ["type": "T\"\\\n", "outcome": "accepted"]) == 5)
        #expect(exposition.help["strata_c_total"] == "C \"q\" \\ x")
        #expect(exposition.value("strata_l_seconds_bucket", ["projection": "audit", "le": "0.001"]) == 0)
        #expect(exposition.value("strata_l_seconds_bucket", ["projection": "audit", "le": "1"]) == 1)
        #expect(exposition.value("strata_l_seconds_sum", ["projection": "audit"]) == 0.5)
    }
}
