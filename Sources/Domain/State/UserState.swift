import Events

/// A user (`user-<id>`) as far as decisions need it: what they are and whether they may act.
public struct UserState: Sendable, Hashable {
    public var userId: String
    public var username: String
    public var role: Role
    public var status: UserStatus
    /// Their personal data was erased: nothing personal may be written for them again.
    public var erased = false

    public init(userId: String, username: String, role: Role, status: UserStatus) {
        self.userId = userId
        self.username = username
        self.role = role
        self.status = status
    }

    /// Folds one event of the user's stream. A stream that does not start with
    /// `UserRegistered` has no user.
    public static func evolve(_ state: UserState?, _ event: StrataEvent) -> UserState? {
        switch event {
        case .userRegistered(let e):
            return UserState(userId: e.userId, username: e.username, role: e.role, status: e.status)
        case .agentApproved:
            guard var user = state else { return nil }
            user.status = .approved
            return user
        case .agentRejected:
            guard var user = state else { return nil }
            user.status = .rejected
            return user
        case .personalDataErased:
            guard var user = state else { return nil }
            user.erased = true
            return user
        default:
            return state
        }
    }
}
