import Events
import StrataCore

/// What `decide` returns: the events to append, or the refusal. Refusals are values.
public enum Decision: Sendable, Equatable {
    /// Append `events` in this order (each to its own `stream`) as one atomic write,
    /// provided every stream in `expectedVersions` is still at that version.
    case accepted(Accepted)
    case refused(StrataError)

    public struct Accepted: Sendable, Equatable {
        public var events: [StrataEvent]
        /// The version each stream the decision read had when it was decided. Streams
        /// appended to without being read (an agent's ledger receiving a commission) are
        /// absent: any version will do.
        public var expectedVersions: [StreamRef: Int64]

        public init(events: [StrataEvent], expectedVersions: [StreamRef: Int64]) {
            self.events = events
            self.expectedVersions = expectedVersions
        }
    }

    public var events: [StrataEvent]? {
        if case .accepted(let accepted) = self { return accepted.events }
        return nil
    }

    public var refusal: StrataError? {
        if case .refused(let error) = self { return error }
        return nil
    }
}
