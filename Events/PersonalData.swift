/// A value that is personal data of one data subject (a borrower account, a customer
/// party, a user): names, phones, emails, addresses, dates of birth, tax ids.
///
/// Typed apart from ordinary strings so that the command service can seal it per subject
/// and erasure can shred it by destroying the subject's key (docs/personal-data.md). It
/// always encodes as one JSON string, so event schemas keep their shape: the clear text in
/// a command and in a decision, the sealed form (`pd1.<key id>.<base64url>`) in the store,
/// on the bus and in history, and the clear text again, or `[erased]`, once a reader has
/// opened it through the key store.
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

    /// What a sealed value reads as once its subject's key is destroyed.
    public static let erased = PersonalData("[erased]")

    /// How every sealed value starts: the format's version and the separator before the key id.
    public static let sealedPrefix = "pd1."

    /// True for the sealed form. Clear values never start with the prefix once sealing is
    /// on, since every personal field is sealed; a store written before sealing holds clear
    /// values, which readers take as they are.
    public var isSealed: Bool { value.utf8.starts(with: PersonalData.sealedPrefix.utf8) }

    /// Whether JSON bytes may hold a sealed value (a string starting `"pd1.`): a quick look
    /// that lets readers skip parsing the many events that carry no personal data.
    public static func mayBeSealed(in json: some Collection<UInt8>) -> Bool {
        let marker = Array(("\"" + sealedPrefix).utf8)
        var matched = 0
        for byte in json {
            if byte == marker[matched] {
                matched += 1
                if matched == marker.count { return true }
            } else {
                matched = byte == marker[0] ? 1 : 0
            }
        }
        return false
    }
}

/// One data subject: whose personal data a sealed value is, and what one key protects.
public struct DataSubject: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let kind: SubjectKind
    /// The bare account, party or user id.
    public let id: String

    public init(_ kind: SubjectKind, _ id: String) {
        self.kind = kind
        self.id = id
    }

    /// `account:A1`, `party:P1`, `user:U1`: how key ids and the key store name a subject.
    public var description: String { kind.rawValue.lowercased() + ":" + id }

    /// The subject a description names, or nil.
    public init?(_ description: some StringProtocol) {
        guard let colon = description.firstIndex(of: ":") else { return nil }
        let id = description[description.index(after: colon)...]
        guard let kind = SubjectKind(rawValue: description[..<colon].uppercased()), !id.isEmpty, !id.contains(":")
        else { return nil }
        self.init(kind, String(id))
    }

    /// The order of the descriptions, without making them: no kind's name begins another's,
    /// so two descriptions first differ in the kind unless the kinds are equal, and the kinds'
    /// names order the same in either case. The command writer sorts a batch's new keys by it,
    /// and joining two strings for every comparison was most of that sort.
    public static func < (a: DataSubject, b: DataSubject) -> Bool {
        a.kind == b.kind ? a.id < b.id : a.kind.rawValue < b.kind.rawValue
    }
}

/// Opens sealed personal data: the key store where it sits beside the service, a remote
/// reader's opened fields from history elsewhere. Every reader opens the same way, which
/// is what keeps a rebuilt read model equal to the live one.
public protocol PersonalDataOpening: Sendable {
    /// The clear text of a sealed value that an event of `stream` carries, or
    /// `PersonalData.erased` when its subject's key was destroyed. Throws when the value
    /// cannot be opened though its key exists (tampered bytes, another stream's value), or
    /// when there is nothing to open it with (the error's `kind` tells the two apart).
    func open(_ sealed: PersonalData, stream: String) throws(PersonalDataError) -> PersonalData

    /// Drops whatever is cached of `subject`'s key: called when its erasure is read.
    func forget(_ subject: DataSubject)
}

extension PersonalDataOpening {
    public func forget(_ subject: DataSubject) {}
}

/// Why a sealed value could not be sealed or opened.
public struct PersonalDataError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The value itself: altered, copied from another stream, not a sealed value at all.
        case value
        /// There is no key store to open it with, or the key store cannot be read: this says
        /// nothing about the value, which may open once the keys can be reached.
        case keyStore
    }

    public let kind: Kind
    public let message: String

    public init(_ message: String, kind: Kind = .value) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
