import Events
import StrataCore

/// Erasure of a data subject's personal data (the key destruction itself is the command
/// service's; the decision is here).
enum PersonalDataDecisions {
    static func erase(_ c: EraseSubject, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        // The admin check comes first: only an admin may learn whether an id names a subject.
        let admin = try d.admin(doing: "erase personal data")
        let kinds = c.kind.map { [$0] } ?? SubjectKind.allCases
        let found = kinds.filter { exists(c.subjectId, as: $0, d) }
        // Without a kind, an id that names several subjects cannot be resolved: the
        // payload is not precise enough, so it is INVALID (DOMAIN.md's AMBIGUOUS_SUBJECT).
        if c.kind == nil && found.count > 1 {
            let names = found.map(\.rawValue).joined(separator: ", ")
            throw StrataError(
                .invalid, reason: "AMBIGUOUS_SUBJECT", "\(c.subjectId) names several subjects (\(names)); give a kind",
                details: [StrataError.FieldProblem(field: "subjectId", reason: "AMBIGUOUS_SUBJECT")])
        }
        guard let kind = found.first else {
            throw .notFound("SUBJECT_NOT_FOUND", "no \(kinds.count == 1 ? kinds[0].rawValue.lowercased() : "subject") \(c.subjectId)")
        }
        let event = PersonalDataErased(subjectId: c.subjectId, kind: kind, erasedBy: admin.userId, reason: c.reason)
        let stream = StrataEvent.personalDataErased(event).stream
        try d.checkExpectedVersion(stream)
        if erased(c.subjectId, as: kind, d) {
            throw .rejected("ALREADY_ERASED", "\(kind.rawValue.lowercased()) \(c.subjectId) was already erased")
        }
        return d.accept([.personalDataErased(event)])
    }

    private static func exists(_ id: String, as kind: SubjectKind, _ d: DecisionInput) -> Bool {
        switch kind {
        case .user: d.state.users[id] != nil
        case .account: d.state.accounts[id] != nil
        case .party: d.state.directory.parties.contains(id)
        }
    }

    private static func erased(_ id: String, as kind: SubjectKind, _ d: DecisionInput) -> Bool {
        switch kind {
        case .user: d.state.users[id]?.erased == true
        case .account: d.state.accounts[id]?.erased == true
        case .party: d.state.parties[id]?.erased == true
        }
    }
}
