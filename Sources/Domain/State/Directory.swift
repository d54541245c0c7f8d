import Events
import StrataCore

/// What must be unique or findable across aggregates: usernames and emails of users, and
/// which invoice customers (parties) exist.
///
/// No single stream can answer "is this username taken?", so the command service keeps
/// the directory whole in memory, folded from every `UserRegistered` and `InvoiceCreated`
/// (a few dozen bytes per user and per customer). Folding an event twice changes nothing.
public struct Directory: Sendable, Hashable {
    /// Lowercased username → user id: usernames are unique regardless of case.
    public private(set) var usernames: [String: String] = [:]
    /// Normalized email → user id.
    public private(set) var emails: [String: String] = [:]
    /// Party ids of invoice customers.
    public private(set) var parties: Set<String> = []

    public init() {}

    public func userId(forUsername username: String) -> String? {
        usernames[username.lowercased()]
    }

    public func userId(forEmail email: String) -> String? {
        emails[FieldRules.normalizedEmail(email)]
    }

    public mutating func apply(_ event: StrataEvent) {
        switch event {
        case .userRegistered(let e):
            usernames[e.username.lowercased()] = e.userId
            emails[FieldRules.normalizedEmail(e.email.value)] = e.userId
        case .invoiceCreated(let e):
            parties.insert(e.customer.partyId)
        default:
            break
        }
    }
}
