import Foundation

/// A strict reader of the Prometheus text exposition format (0.0.4), stricter than the
/// format where Strata has no reason to use its freedom (comments, timestamps, a trailing
/// comma): every line must be a HELP, a TYPE or a sample of a family already typed; a
/// family's lines are together; escapes are only those the format defines; counters are
/// `_total` and never negative; a histogram has increasing bounds, cumulative counts, a
/// `+Inf` bucket equal to its `_count`, and a `_sum`.
struct Exposition {
    struct Sample: Equatable {
        let name: String
        let labels: [String: String]
        let value: Double
    }

    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    private(set) var types: [String: String] = [:]
    private(set) var help: [String: String] = [:]
    private(set) var samples: [Sample] = []

    init(_ text: String) throws(Problem) {
        guard !text.isEmpty, text.hasSuffix("\n") else { throw Problem(description: "empty, or no final line feed") }
        var finished: Set<String> = []
        var current: String?
        var seen: Set<String> = []
        func enter(_ family: String, line: Int) throws(Problem) {
            if current == family { return }
            if finished.contains(family) { throw Problem(description: "line \(line): \(family) is split") }
            if let current { finished.insert(current) }
            current = family
        }
        for (index, line) in text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                let rest = line.dropFirst(7)
                guard let space = rest.firstIndex(of: " ") else {
                    throw Problem(description: "line \(number): no text")
                }
                let name = String(rest[..<space])
                let value = String(rest[rest.index(after: space)...])
                guard Self.isMetricName(name) else { throw Problem(description: "line \(number): bad name \(name)") }
                try enter(name, line: number)
                if line.hasPrefix("# HELP ") {
                    guard help[name] == nil else { throw Problem(description: "line \(number): second HELP") }
                    help[name] = try Self.unescape(value, quotes: false, line: number)
                } else {
                    guard types[name] == nil else { throw Problem(description: "line \(number): second TYPE") }
                    guard ["counter", "gauge", "histogram", "summary", "untyped"].contains(value) else {
                        throw Problem(description: "line \(number): unknown type \(value)")
                    }
                    types[name] = value
                }
                continue
            }
            let sample = try Self.sample(line, line: number)
            let family = family(of: sample.name)
            guard let family else { throw Problem(description: "line \(number): \(sample.name) has no TYPE before it") }
            try enter(family, line: number)
            let key = sample.name + "|" + sample.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                .joined(separator: ",")
            guard seen.insert(key).inserted else { throw Problem(description: "line \(number): duplicate series") }
            if types[family] == "counter" {
                guard family.hasSuffix("_total"), sample.value >= 0 else {
                    throw Problem(description: "line \(number): a counter is _total and never negative")
                }
            }
            samples.append(sample)
        }
        try checkHistograms()
    }

    /// The value of the one sample with this name and exactly these labels.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    func samples(named name: String) -> [Sample] {
        samples.filter { $0.name == name }
    }

    private func family(of name: String) -> String? {
        if types[name] != nil { return name }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if types[base] == "histogram" { return base }
        }
        return nil
    }

    private func checkHistograms() throws(Problem) {
        for (name, type) in types where type == "histogram" {
            var series: [[String: String]: [(bound: Double, count: Double)]] = [:]
            for sample in samples(named: name + "_bucket") {
                guard let le = sample.labels["le"], let bound = Self.number(le) else {
                    throw Problem(description: "\(name): a bucket without a number le")
                }
                series[sample.labels.filter { $0.key != "le" }, default: []].append((bound, sample.value))
            }
            for (labels, buckets) in series {
                let ordered = zip(buckets, buckets.dropFirst()).allSatisfy { $0.bound < $1.bound && $0.count <= $1.count }
                guard ordered else {
                    throw Problem(description: "\(name)\(labels): bounds must increase and counts accumulate")
                }
                guard let last = buckets.last, last.bound == .infinity else {
                    throw Problem(description: "\(name)\(labels): no +Inf bucket")
                }
                guard value(name + "_count", labels) == last.count, value(name + "_sum", labels) != nil else {
                    throw Problem(description: "\(name)\(labels): _count must equal the +Inf bucket, and _sum be there")
                }
            }
        }
    }

    private static func sample(_ line: Substring, line number: Int) throws(Problem) -> Sample {
        var rest = line[...]
        let name = String(rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" })
        guard isMetricName(name) else { throw Problem(description: "line \(number): bad sample name in \(line)") }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let label = String(rest.prefix { $0 != "=" })
                guard isLabelName(label), labels[label] == nil else {
                    throw Problem(description: "line \(number): bad or repeated label \(label)")
                }
                rest = rest.dropFirst(label.count)
                guard rest.hasPrefix("=\"") else { throw Problem(description: "line \(number): no quoted value") }
                rest = rest.dropFirst(2)
                var raw = ""
                var escaped = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped {
                        raw.append("\\")
                        raw.append(character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        break
                    } else {
                        raw.append(character)
                    }
                }
                labels[label] = try unescape(raw, quotes: true, line: number)
                if rest.first == "," {
                    rest = rest.dropFirst()
                    guard rest.first != "}" else { throw Problem(description: "line \(number): trailing comma") }
                } else if rest.first != "}" {
                    throw Problem(description: "line \(number): expected , or }")
                }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " ", let value = Self.number(String(rest.dropFirst())) else {
            throw Problem(description: "line \(number): a sample is NAME{LABELS} VALUE: \(line)")
        }
        return Sample(name: name, labels: labels, value: value)
    }

    /// A sample value as the format writes one (no timestamp: Strata writes none).
    static func number(_ text: String) -> Double? {
        switch text {
        case "+Inf": return .infinity
        case "-Inf": return -.infinity
        case "NaN": return .nan
        default:
            guard !text.isEmpty, text.allSatisfy({ $0.isNumber || "+-.e".contains($0) }) else { return nil }
            return Double(text)
        }
    }

    private static func unescape(_ text: String, quotes: Bool, line: Int) throws(Problem) -> String {
        var result = ""
        var escaped = false
        for character in text {
            if escaped {
                switch character {
                case "\\": result.append("\\")
                case "n": result.append("\n")
                case "\"" where quotes: result.append("\"")
                default: throw Problem(description: "line \(line): unknown escape \\\(character)")
                }
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\n" {
                throw Problem(description: "line \(line): a raw line feed")
            } else {
                result.append(character)
            }
        }
        guard !escaped else { throw Problem(description: "line \(line): a lone backslash") }
        return result
    }

    static func isMetricName(_ name: String) -> Bool {
        guard let first = name.first, first.isASCII, first.isLetter || first == "_" || first == ":" else {
            return false
        }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") }
    }

    static func isLabelName(_ name: String) -> Bool {
        guard let first = name.first, first.isASCII, first.isLetter || first == "_", !name.hasPrefix("__") else {
            return false
        }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }
}
