/// Client-chosen identifiers: 1–64 characters of `[A-Za-z0-9_-]` (UUIDs and ULIDs fit).
public enum Identifier {
    public static let maximumLength = 64

    public static func isValid(_ id: String, maximumLength: Int = Identifier.maximumLength) -> Bool {
        // Scanned as one buffer: through the `utf8` view's iterator, checking the ids of
        // every event a command appends was 2% of the writer's instructions.
        var id = id
        return id.withUTF8 { bytes in
            (1...maximumLength).contains(bytes.count)
                && bytes.allSatisfy { b in
                    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b)
                        || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b)
                        || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b)
                        || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
                }
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
    /// `<category>-<id>`, made once: the store names every event's stream by it and orders
    /// a command's expectations by it, and joining the two each time was 3% of the writer.
    public let description: String

    /// nil unless the category is 1–32 lowercase ASCII letters and the id a valid `Identifier`.
    public init?(category: String, id: String) {
        guard StreamName.isValidCategory(category), Identifier.isValid(id) else { return nil }
        self.category = category
        self.id = id
        self.description = StreamName.join(category, id)
    }

    /// `<category>-<id>` made in one allocation: joining with `+` appended twice, growing the
    /// string each time (0.6 k instructions a name, and the writer makes several a command).
    private static func join(_ category: String, _ id: String) -> String {
        var category = category
        var id = id
        return category.withUTF8 { head in
            id.withUTF8 { tail in
                String(unsafeUninitializedCapacity: head.count + 1 + tail.count) { out in
                    var next = out.baseAddress!
                    next.update(from: head.baseAddress!, count: head.count)
                    next += head.count
                    next.pointee = UInt8(ascii: "-")
                    next += 1
                    next.update(from: tail.baseAddress!, count: tail.count)
                    return head.count + 1 + tail.count
                }
            }
        }
    }

    /// Parses `<category>-<id>`.
    public init?(_ raw: String) {
        guard let dash = raw.firstIndex(of: "-") else { return nil }
        self.init(category: String(raw[..<dash]), id: String(raw[raw.index(after: dash)...]))
    }

    public static func isValidCategory(_ category: String) -> Bool {
        var category = category
        return category.withUTF8 { bytes in
            (1...32).contains(bytes.count) && bytes.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }
        }
    }

    public static func < (a: StreamName, b: StreamName) -> Bool { a.description < b.description }

    // The name says everything: the category ends at the first `-`, so equal names have
    // equal parts, and one string is hashed instead of three.
    public static func == (a: StreamName, b: StreamName) -> Bool { a.description == b.description }

    public func hash(into hasher: inout Hasher) { hasher.combine(description) }
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
