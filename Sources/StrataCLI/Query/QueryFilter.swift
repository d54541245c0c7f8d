import Projections
import StrataCore

/// One filter a named query takes: the option that sets it, and the SQL condition it adds.
///
/// The condition is constant text from this file with one named parameter (`:agent`);
/// what the user typed only ever travels as that parameter's bound value.
struct QueryFilter: Sendable {
    /// How the option's text becomes the bound value.
    enum Kind: Sendable, Equatable {
        /// Bound as typed (ids).
        case exact
        /// A code the read models store in capitals (`ACTIVE`, `AGENT`), one of `codes`: bound
        /// uppercased. Any other is a usage error, not a query that quietly answers no rows.
        case code([String])
        /// A name from a catalogue spelt in mixed case (`LoanApproved`), one of `names` whatever
        /// the case typed: bound as the catalogue spells it. Any other is a usage error.
        case name([String])
        /// A `YYYY-MM-DD` day, compared with a date column.
        case day
        /// The start of a time range on a `recorded_at`-style column: a time, or a day's first instant.
        case since
        /// The end of a time range (inclusive): a time, or a day's last millisecond.
        case until
        /// A piece of text found anywhere in the columns of the condition (`LIKE`: ASCII letters in any case).
        case search
    }

    let option: String
    let kind: Kind
    let condition: String

    /// The parameter the condition binds: the option's name with `-` as `_`.
    var parameter: String { option.replacingOccurrences(of: "-", with: "_") }

    /// The bound value for what the user typed, or a usage error saying what is expected.
    func value(_ text: String) throws(UsageError) -> ProjectionValue {
        switch kind {
        case .exact:
            guard !text.isEmpty else { throw UsageError("--\(option) must not be empty") }
            return .text(text)
        case .code(let codes):
            guard codes.contains(text.uppercased()) else {
                throw UsageError("--\(option) must be one of \(codes.joined(separator: ", ")), got '\(text)'")
            }
            return .text(text.uppercased())
        case .name(let names):
            guard let name = names.first(where: { $0.lowercased() == text.lowercased() }) else {
                throw UsageError("--\(option) must be one of \(names.joined(separator: ", ")), got '\(text)'")
            }
            return .text(name)
        case .day:
            guard let day = LocalDate(text) else {
                throw UsageError("--\(option) must be a date YYYY-MM-DD, got '\(text)'")
            }
            return .text(day.description)
        case .since, .until:
            guard let instant = Timestamp(argument: text, endOfDay: kind == .until) else {
                throw UsageError(
                    "--\(option) must be a time (2026-11-20T10:00:00Z) or a date (2026-11-20), got '\(text)'")
            }
            return .text(instant.description)
        case .search:
            guard !text.isEmpty else { throw UsageError("--\(option) must not be empty") }
            // `%` and `_` typed by the user are literal characters, not wildcards.
            var escaped = ""
            for character in text {
                if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
                escaped.append(character)
            }
            return .text("%" + escaped + "%")
        }
    }
}
