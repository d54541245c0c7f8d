import Domain
import Events
import StrataCore

/// Given/when/then for the deciders: a history of events, and commands decided exactly as
/// the command service decides them.
///
/// A command goes through `Command.validated` (the body's path: encode, parse, validate),
/// then only the streams it declares in `Command.reads` are folded from the history, with
/// the whole `Directory`, and `Decider.decide` runs on that. A decider that read a stream
/// it did not declare would see it empty here, and its tests would fail.
public struct DomainScenario: Sendable {
    public var context: DecisionContext
    /// Every event so far, in order.
    public private(set) var history: [StrataEvent] = []

    public init(now: Timestamp = Timestamp("2026-11-20T10:00:00.000Z")!, configuration: DomainConfiguration = .init()) {
        self.context = DecisionContext(now: now, configuration: configuration)
    }

    /// The business date of `context.now`.
    public var today: LocalDate { context.today }

    /// Moves "now" (and so today) by whole days.
    public mutating func advance(days: Int) {
        context.now = context.now.adding(milliseconds: Int64(days) * 86_400_000)
    }

    /// Adds events to the history, as if earlier commands had decided them.
    public mutating func given(_ events: [StrataEvent]) {
        history += events
    }

    public mutating func given(_ events: StrataEvent...) {
        given(events)
    }

    /// The state a decision reading `streams` sees: those streams folded, the directory whole.
    public func state(reading streams: [StreamRef]) -> DomainState {
        var directory = Directory()
        for event in history { directory.apply(event) }
        var state = DomainState(directory: directory)
        let wanted = Set(streams)
        for event in history where wanted.contains(event.stream) {
            state.apply(event)
        }
        return state
    }

    /// The version of `stream`: its number of events in the history.
    public func version(of stream: StreamRef) -> Int64 {
        Int64(history.lazy.filter { $0.stream == stream }.count)
    }

    /// Decides `command` by `actor` without recording anything.
    public func decide(
        _ command: Command, actor: String, expectedVersion: Int64? = nil, permittedRoles: Set<Role>? = nil
    ) -> Decision {
        var context = self.context
        context.permittedRoles = permittedRoles
        switch command.validated(in: context) {
        case .failure(let error):
            return .refused(error)
        case .success(let valid):
            return decide(valid, actor: actor, expectedVersion: expectedVersion, context: context)
        }
    }

    /// Decides a raw body (`type` and `payload` as a client sent them) by `actor`.
    public func decide(
        type: String, payload: [String: JSONValue], actor: String, expectedVersion: Int64? = nil
    ) -> Decision {
        switch Command.parse(type: type, payload: payload, context: context) {
        case .failure(let error): .refused(error)
        case .success(let valid): decide(valid, actor: actor, expectedVersion: expectedVersion, context: context)
        }
    }

    private func decide(_ valid: ValidCommand, actor: String, expectedVersion: Int64?, context: DecisionContext)
        -> Decision
    {
        let streams = valid.command.reads(actor: actor, configuration: context.configuration)
        return Decider.decide(
            valid, actor: actor, expectedVersion: expectedVersion, reads: streams, state: state(reading: streams),
            context: context)
    }

    /// Decides `command` and, when accepted, appends its events to the history (after
    /// checking that every expected version still holds, as the store would).
    @discardableResult
    public mutating func when(
        _ command: Command, actor: String, expectedVersion: Int64? = nil, permittedRoles: Set<Role>? = nil
    ) -> Decision {
        let decision = decide(command, actor: actor, expectedVersion: expectedVersion, permittedRoles: permittedRoles)
        if case .accepted(let accepted) = decision {
            for (stream, version) in accepted.expectedVersions {
                precondition(self.version(of: stream) == version, "stale expectation on \(stream)")
            }
            history += accepted.events
        }
        return decision
    }
}
