import Events

/// A borrower account (`account-<id>`): who looks after it and whether it may borrow.
public struct AccountState: Sendable, Hashable {
    public var accountId: String
    public var assignedAgentId: String
    public var status: AccountStatus
    public var erased = false

    public init(accountId: String, assignedAgentId: String, status: AccountStatus) {
        self.accountId = accountId
        self.assignedAgentId = assignedAgentId
        self.status = status
    }

    public static func evolve(_ state: AccountState?, _ event: StrataEvent) -> AccountState? {
        switch event {
        case .accountOpened(let e):
            return AccountState(accountId: e.accountId, assignedAgentId: e.assignedAgentId, status: e.status)
        case .accountUpdated(let e):
            guard var account = state else { return nil }
            if let agent = e.assignedAgentId { account.assignedAgentId = agent }
            return account
        case .accountStatusChanged(let e):
            guard var account = state else { return nil }
            account.status = e.status
            return account
        case .personalDataErased:
            guard var account = state else { return nil }
            account.erased = true
            return account
        default:
            return state
        }
    }
}
