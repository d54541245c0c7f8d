/// A value that is personal data of one data subject (a borrower account, a customer
/// party, a user): names, phones, emails, addresses, dates of birth, tax ids.
///
/// Typed apart from ordinary strings so that the erasure work can seal it per subject
/// and shred it by destroying the subject's key. Until then it is stored in clear and
/// encodes as a plain JSON string.
public struct PersonalData: Sendable, Hashable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let value: String

    public init(_ value: String) { self.value = value }
    public init(stringLiteral value: String) { self.value = value }

    public init(from decoder: any Decoder) throws {
        value = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }

    public var description: String { value }
}
