// Erasure of a data subject (a borrower account, an invoice customer party, a user).
// The subject may live in any of several stream categories, which is why event types
// carry no category: the EraseSubject decider picks the stream.

/// An admin erased a data subject's personal data: the subject's key is destroyed, so its
/// sealed fields read as "[erased]" from now on, while the hash chain stays valid.
/// Money, dates, statuses and ids are not personal data and stay readable.
public struct PersonalDataErased: DomainEvent, Hashable {
    public static let eventType = "PersonalDataErased"
    public static let schemaVersion = 1

    /// The bare account, party or user id.
    public var subjectId: String
    /// Decided: looked up among accounts, parties and users when the command left it out.
    public var kind: SubjectKind
    public var erasedBy: String
    public var reason: String

    public init(subjectId: String, kind: SubjectKind, erasedBy: String, reason: String) {
        self.subjectId = subjectId
        self.kind = kind
        self.erasedBy = erasedBy
        self.reason = reason
    }
}
