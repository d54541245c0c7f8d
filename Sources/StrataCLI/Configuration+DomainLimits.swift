import Domain
import StrataCore

/// The domain limits a config file may set under `domain` (DOMAIN.md's "configured" limits).
///
/// They are read from the config file only, with no flag or environment variable: they are the
/// business's policy, which every process that reads them must see alike, and which a flag
/// given to one run of `serve` would silently drop at its next restart.
extension Configuration {
    static let domainFileKey = "domain"

    /// Each limit's key in the `domain` object.
    enum DomainLimitKey: String, CaseIterable {
        case maximumPrincipalCents, minimumCashoutCents, taxSlabsBp
    }

    /// The limits the `domain` object sets, the others left at DOMAIN's defaults; refuses an
    /// unknown key and a value outside its range, naming the key and the range.
    static func readDomainLimits(_ value: JSONValue, in path: String) throws(UsageError) -> DomainConfiguration {
        let known = DomainLimitKey.allCases.map(\.rawValue).joined(separator: ", ")
        guard let members = value.objectValue else {
            throw UsageError("config file \(path): '\(domainFileKey)' must be a JSON object of limits (\(known))")
        }
        var limits = DomainConfiguration()
        for (key, value) in members {
            guard let limit = DomainLimitKey(rawValue: key) else {
                throw UsageError("config file \(path): unknown setting '\(domainFileKey).\(key)' (known: \(known))")
            }
            let name = "config file \(path): '\(domainFileKey).\(key)'"
            switch limit {
            case .maximumPrincipalCents:
                limits.maximumPrincipalCents = try cents(value, DomainConfiguration.principalLimitRange, name)
            case .minimumCashoutCents:
                limits.minimumCashoutCents = try cents(value, DomainConfiguration.cashoutLimitRange, name)
            case .taxSlabsBp:
                limits.taxSlabsBp = try taxSlabs(value, name)
            }
        }
        return limits
    }

    private static func cents(
        _ value: JSONValue, _ range: ClosedRange<Int64>, _ name: String
    ) throws(UsageError) -> Int64 {
        guard let cents = value.integerValue, range.contains(cents) else {
            throw UsageError("\(name) must be an integer of cents from \(range.lowerBound) to \(range.upperBound)")
        }
        return cents
    }

    private static func taxSlabs(_ value: JSONValue, _ name: String) throws(UsageError) -> [Int] {
        let range = DomainConfiguration.taxSlabRange
        let rule =
            "a non-empty array of distinct integers from \(range.lowerBound) to \(range.upperBound) (basis points)"
        guard let elements = value.arrayValue, !elements.isEmpty else { throw UsageError("\(name) must be \(rule)") }
        var slabs: [Int] = []
        for element in elements {
            guard let slab = element.integerValue.flatMap({ Int(exactly: $0) }), range.contains(slab) else {
                throw UsageError("\(name) must be \(rule); \(CanonicalJSON.string(element)) is not")
            }
            guard !slabs.contains(slab) else { throw UsageError("\(name) must be \(rule); \(slab) is there twice") }
            slabs.append(slab)
        }
        return slabs
    }
}
