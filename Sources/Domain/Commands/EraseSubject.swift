import Events
import StrataCore

/// An approved admin erases a data subject's personal data (crypto-shredding).
public struct EraseSubject: CommandPayload {
    public static let commandType = "EraseSubject"
    public var subjectId: String
    /// When absent, the id is looked up among accounts, parties and users.
    public var kind: SubjectKind?
    public var reason: String

    public init(subjectId: String, kind: SubjectKind? = nil, reason: String) {
        self.subjectId = subjectId
        self.kind = kind
        self.reason = reason
    }

    public init?(reading r: inout PayloadReader) {
        let subjectId = r.identifier("subjectId")
        let kind = r.choice("kind", SubjectKind.self, required: false)
        let reason = r.text("reason", maximumLength: PayloadLimits.reasonLength, multiline: true)
        guard let subjectId, let reason else { return nil }
        self.init(subjectId: subjectId, kind: kind, reason: reason)
    }
}
