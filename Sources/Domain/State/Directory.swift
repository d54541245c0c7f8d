import Events
import StrataCore

/// What must be unique or findable across aggregates: usernames and emails of users, and
/// which invoice customers (parties) exist.
///
/// No single stream can answer "is this username taken?", so the command service keeps
/// the users' part whole in memory, folded from every `UserRegistered` (a few dozen bytes per
/// user). Folding an event twice changes nothing.
///
/// Parties are asked about only by an erasure, of one party at a time, and a business may
/// invoice millions of customers, so the command service holds only the parties it may be
/// asked about: those whose invoices it decided since it last let them go (`forgetParties`,
/// between batches), and those it looked up in the store (`addParty`) before deciding a command
/// that reads the party's stream. A fold of the whole history (tests, tools) holds them all.
///
/// Emails are personal data: the directory keeps each as what `emailKey` makes of it, which
/// in the command service is a keyed digest (CONTRACT.md "Personal data"), so the writer's
/// memory holds no clear email. An email that reaches it sealed (its subject erased) is
/// not kept, and an erased user's email is let go: nobody can know it any more.
public struct Directory: Sendable, Hashable {
    /// Lowercased username → user id: usernames are unique regardless of case.
    public private(set) var usernames: [String: String] = [:]
    /// The key of each normalized email → user id.
    public private(set) var emails: [String: String] = [:]
    /// Party ids of invoice customers: every one, or those a decision may ask about (above).
    public private(set) var parties: Set<String> = []
    public let emailKey: EmailKey

    public init(emailKey: EmailKey = .plain) {
        self.emailKey = emailKey
    }

    public func userId(forUsername username: String) -> String? {
        usernames[username.lowercased()]
    }

    public func userId(forEmail email: String) -> String? {
        emails[emailKey.make(FieldRules.normalizedEmail(email))]
    }

    public mutating func apply(_ event: StrataEvent) {
        switch event {
        case .userRegistered(let e):
            usernames[e.username.lowercased()] = e.userId
            if !Self.isSealed(e.email), e.email != .erased {
                emails[emailKey.make(FieldRules.normalizedEmail(e.email.value))] = e.userId
            }
        case .invoiceCreated(let e):
            parties.insert(e.customer.partyId)
        case .personalDataErased(let e) where e.kind == .user:
            for (key, userId) in emails where userId == e.subjectId { emails[key] = nil }
        default:
            break
        }
    }

    /// Records that an invoice names `partyId`, found elsewhere than in a folded event (the store).
    public mutating func addParty(_ partyId: String) {
        parties.insert(partyId)
    }

    /// Lets every party go, for the store to answer for them again.
    public mutating func forgetParties() {
        parties = []
    }

    /// Whether an email is in the sealed form rather than clear. The prefix alone does not say:
    /// `pd1.ravi@example.com` is an email, which must be as taken as any other. The sealed form
    /// is the prefix, a key id and base64url, none of which holds an `@`, which every email has.
    private static func isSealed(_ email: PersonalData) -> Bool {
        email.isSealed && !email.value.utf8.contains(UInt8(ascii: "@"))
    }

    public static func == (a: Directory, b: Directory) -> Bool {
        a.usernames == b.usernames && a.emails == b.emails && a.parties == b.parties
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(usernames)
        hasher.combine(emails)
        hasher.combine(parties)
    }
}

/// How the directory keys a normalized email: the email itself (`plain`, for tests and
/// tools), or a keyed digest of it (the command service).
public struct EmailKey: Sendable {
    public let make: @Sendable (String) -> String

    public init(_ make: @escaping @Sendable (String) -> String) {
        self.make = make
    }

    public static let plain = EmailKey { $0 }
}
