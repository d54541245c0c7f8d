/// Client-chosen identifiers: 1–64 characters of `[A-Za-z0-9_-]` (UUIDs and ULIDs fit).
public enum Identifier {
    public static let maximumLength = 64

    public static func isValid(_ id: String, maximumLength: Int = Identifier.maximumLength) -> Bool {
        let utf8 = id.utf8
        guard (1...maximumLength).contains(utf8.count) else { return false }
        return utf8.allSatisfy { b in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
        }
    }
}

/// A stream's name, `<category>-<id>` (`loan-L1`, `settings-global`).
///
/// The category is everything before the first `-`; it is lowercase letters only, so
/// the id may itself contain dashes (UUIDs do).
public struct StreamName: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let category: String
    public let id: String

    /// nil unless the category is 1–32 lowercase ASCII letters and the id a valid `Identifier`.
    public init?(category: String, id: String) {
        guard StreamName.isValidCategory(category), Identifier.isValid(id) else { return nil }
        self.category = category
        self.id = id
    }

    /// Parses `<category>-<id>`.
    public init?(_ raw: String) {
        guard let dash = raw.firstIndex(of: "-") else { return nil }
        self.init(category: String(raw[..<dash]), id: String(raw[raw.index(after: dash)...]))
    }

    public var description: String { category + "-" + id }

    public static func isValidCategory(_ category: String) -> Bool {
        (1...32).contains(category.utf8.count)
            && category.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
    }

    public static func < (a: StreamName, b: StreamName) -> Bool { a.description < b.description }
}

extension StreamName: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let name = StreamName(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a stream name: \(text)")
        }
        self = name
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
