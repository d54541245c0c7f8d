import Events

/// An invoice customer (`party-<id>`). Parties have no stream of their own until they are
/// erased; that they exist at all is known from the `Directory`.
public struct PartyState: Sendable, Hashable {
    public var erased = false

    public init() {}

    public static func evolve(_ state: PartyState, _ event: StrataEvent) -> PartyState {
        guard case .personalDataErased = event else { return state }
        var party = state
        party.erased = true
        return party
    }
}
