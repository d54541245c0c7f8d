/// Metric families and their values, rendered as the Prometheus text exposition format
/// (version 0.0.4): what `--metrics-file` writes for node_exporter's textfile collector.
///
/// A value type with no lock of its own: `MetricsRegistry` holds one behind a mutex, and the
/// hot paths update it once per batch with counts they gathered themselves. Families are
/// declared first (the handles they return say which family an update is for) and render in
/// the order declared; a family's series render in the order of their label values, so the
/// same values always make the same text.
public struct MetricSet: Sendable {
    public enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    /// A counter family: only ever goes up (from the process's start).
    public struct Counter: Sendable, Hashable {
        let index: Int
    }

    /// A gauge family: a value that is set.
    public struct Gauge: Sendable, Hashable {
        let index: Int
    }

    /// A histogram family with fixed upper bounds.
    public struct Histogram: Sendable, Hashable {
        let index: Int
    }

    struct Series: Sendable {
        var value: Double = 0
        /// Per bucket (not cumulative; the renderer adds them up), then one for +Inf.
        var buckets: [UInt64] = []
        var sum: Double = 0
        var count: UInt64 = 0
    }

    struct Family: Sendable {
        let name: String
        let help: String
        let kind: Kind
        let labelNames: [String]
        let bounds: [Double]
        var series: [[String]: Series] = [:]
    }

    private var families: [Family] = []

    public init() {}

    // MARK: - Declaring

    /// Declares a counter; one without labels starts at 0 and is always rendered.
    public mutating func counter(_ name: String, help: String, labels: [String] = []) -> Counter {
        Counter(index: declare(name, help: help, kind: .counter, labels: labels, bounds: []))
    }

    /// Declares a gauge; one without labels starts at 0 and is always rendered.
    public mutating func gauge(_ name: String, help: String, labels: [String] = []) -> Gauge {
        Gauge(index: declare(name, help: help, kind: .gauge, labels: labels, bounds: []))
    }

    /// Declares a histogram with `buckets`, the upper bounds (strictly increasing, finite;
    /// the +Inf bucket is implied).
    public mutating func histogram(
        _ name: String, help: String, labels: [String] = [], buckets: [Double]
    ) -> Histogram {
        precondition(!buckets.isEmpty && buckets.allSatisfy(\.isFinite), "\(name): buckets must be finite")
        precondition(zip(buckets, buckets.dropFirst()).allSatisfy { $0 < $1 }, "\(name): buckets must increase")
        precondition(!labels.contains("le"), "\(name): le is the bucket label")
        return Histogram(index: declare(name, help: help, kind: .histogram, labels: labels, bounds: buckets))
    }

    private mutating func declare(_ name: String, help: String, kind: Kind, labels: [String], bounds: [Double]) -> Int {
        precondition(Self.isMetricName(name), "\(name) is not a metric name")
        precondition(!families.contains { $0.name == name }, "\(name) is declared twice")
        precondition(labels.allSatisfy(Self.isLabelName) && Set(labels).count == labels.count, "\(name): bad labels")
        var family = Family(name: name, help: help, kind: kind, labelNames: labels, bounds: bounds)
        if labels.isEmpty { family.series[[]] = Self.emptySeries(family) }
        families.append(family)
        return families.count - 1
    }

    private static func emptySeries(_ family: Family) -> Series {
        Series(buckets: family.kind == .histogram ? Array(repeating: 0, count: family.bounds.count + 1) : [])
    }

    // MARK: - Updating

    /// Adds `amount` (≥ 0) to the counter's series with these label values.
    public mutating func add(_ counter: Counter, _ amount: Double = 1, labels: [String] = []) {
        precondition(amount >= 0, "a counter only goes up")
        update(counter.index, labels) { $0.value += amount }
    }

    public mutating func set(_ gauge: Gauge, _ value: Double, labels: [String] = []) {
        update(gauge.index, labels) { $0.value = value }
    }

    /// The gauge's value, nil for a series never set.
    public func value(_ gauge: Gauge, labels: [String] = []) -> Double? {
        families[gauge.index].series[labels]?.value
    }

    /// Counts one observation of `value` (`count` of them when several had the same value).
    public mutating func observe(_ histogram: Histogram, _ value: Double, count: UInt64 = 1, labels: [String] = []) {
        let bounds = families[histogram.index].bounds
        var bucket = 0
        while bucket < bounds.count && value > bounds[bucket] { bucket += 1 }
        update(histogram.index, labels) { series in
            series.buckets[bucket] += count
            series.sum += value * Double(count)
            series.count += count
        }
    }

    private mutating func update(_ index: Int, _ labels: [String], _ change: (inout Series) -> Void) {
        precondition(labels.count == families[index].labelNames.count, "\(families[index].name): wrong label count")
        let buckets = families[index].kind == .histogram ? families[index].bounds.count + 1 : 0
        // The default is built only for a series seen for the first time.
        change(&families[index].series[labels, default: Series(buckets: Array(repeating: 0, count: buckets))])
    }

    // MARK: - Rendering

    /// The text exposition: `# HELP` and `# TYPE` for each family, then its samples; each
    /// line ends with a line feed.
    public func rendered() -> String {
        var text = ""
        for family in families {
            text += "# HELP \(family.name) \(Self.escapedHelp(family.help))\n"
            text += "# TYPE \(family.name) \(family.kind.rawValue)\n"
            for (labels, series) in family.series.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                let pairs = zip(family.labelNames, labels).map { ($0, $1) }
                switch family.kind {
                case .counter, .gauge:
                    text += Self.sample(family.name, pairs, Self.number(series.value))
                case .histogram:
                    var cumulative: UInt64 = 0
                    for (index, bound) in family.bounds.enumerated() {
                        cumulative += series.buckets[index]
                        let le = ("le", Self.number(bound))
                        text += Self.sample(family.name + "_bucket", pairs + [le], "\(cumulative)")
                    }
                    cumulative += series.buckets[family.bounds.count]
                    text += Self.sample(family.name + "_bucket", pairs + [("le", "+Inf")], "\(cumulative)")
                    text += Self.sample(family.name + "_sum", pairs, Self.number(series.sum))
                    text += Self.sample(family.name + "_count", pairs, "\(series.count)")
                }
            }
        }
        return text
    }

    private static func sample(_ name: String, _ labels: [(String, String)], _ value: String) -> String {
        guard !labels.isEmpty else { return "\(name) \(value)\n" }
        let inner = labels.map { "\($0.0)=\"\(escapedLabelValue($0.1))\"" }.joined(separator: ",")
        return "\(name){\(inner)} \(value)\n"
    }

    /// A sample value or bucket bound as Prometheus's own clients write it: integers without
    /// a fraction (`1`, not `1.0`, so an `le` label reads the same as theirs), others in the
    /// shortest form that reads back exactly, and `+Inf`, `-Inf`, `NaN`.
    public static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return value.description
    }

    /// Backslash, double quote and line feed escaped, as label values need.
    public static func escapedLabelValue(_ value: String) -> String {
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// Backslash and line feed escaped, as help text needs (a quote stays as it is).
    public static func escapedHelp(_ help: String) -> String {
        var escaped = ""
        for character in help {
            switch character {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    static func isMetricName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCIILetter || first == "_" || first == ":" else {
            return false
        }
        return name.unicodeScalars.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == "_" || $0 == ":" }
    }

    static func isLabelName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCIILetter || first == "_", !name.hasPrefix("__") else {
            return false
        }
        return name.unicodeScalars.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == "_" }
    }
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
