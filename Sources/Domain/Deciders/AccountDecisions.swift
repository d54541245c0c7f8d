import Events
import StrataCore

/// Borrower accounts.
enum AccountDecisions {
    /// An admin, or the approved agent the account is assigned to, opens it (ACTIVE).
    static func open(_ c: OpenAccount, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        let actor = try d.actor([.admin, .agent], doing: "open accounts")
        let agent = try assignableAgent(c.assignedAgentId, d)
        if actor.role == .agent && actor.userId != c.assignedAgentId {
            throw .forbidden("NOT_ASSIGNED_AGENT", "agents open accounts only for themselves, not for \(c.assignedAgentId)")
        }
        let stream = StreamRef.account(c.accountId)
        try d.checkExpectedVersion(stream)
        if d.state.accounts[c.accountId] != nil {
            throw .rejected("ACCOUNT_ALREADY_EXISTS", "account \(c.accountId) already exists")
        }
        try requireWorkingAgent(agent)
        let event = AccountOpened(
            accountId: c.accountId, name: c.name, phone: c.phone, email: c.email, alternatePhone: c.alternatePhone,
            address: c.address, assignedAgentId: c.assignedAgentId, openedBy: actor.userId, status: .active)
        return d.accept([.accountOpened(event)])
    }

    /// An admin or the assigned agent changes details; only an admin moves the account to
    /// another (approved) agent.
    static func update(_ c: UpdateAccount, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        let actor = try d.actor([.admin, .agent], doing: "update accounts")
        // Moving an account to someone else is an admin's act: an agent can never do it,
        // so it is refused before anything is looked up (and reveals nothing).
        if actor.role == .agent, let agent = c.assignedAgentId, agent != actor.userId {
            throw .forbidden("REASSIGNMENT_ADMIN_ONLY", "only an admin may move an account to another agent")
        }
        let account = try existing(c.accountId, d)
        let newAgent = try c.assignedAgentId.map { id throws(StrataError) in try assignableAgent(id, d) }
        if actor.role == .agent && actor.userId != account.assignedAgentId {
            throw .forbidden("NOT_ASSIGNED_AGENT", "account \(c.accountId) is assigned to another agent")
        }
        try d.checkExpectedVersion(.account(c.accountId))
        let personal = [c.name, c.phone, c.email, c.alternatePhone, c.address].contains { $0 != nil }
        if account.erased && personal {
            throw .rejected("SUBJECT_ERASED", "account \(c.accountId)'s personal data was erased")
        }
        if let newAgent { try requireWorkingAgent(newAgent) }
        let event = AccountUpdated(
            accountId: c.accountId, name: c.name, phone: c.phone, email: c.email, alternatePhone: c.alternatePhone,
            address: c.address, assignedAgentId: c.assignedAgentId, updatedBy: actor.userId)
        return d.accept([.accountUpdated(event)])
    }

    static func changeStatus(_ c: ChangeAccountStatus, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        let admin = try d.admin(doing: "change account status")
        let account = try existing(c.accountId, d)
        try d.checkExpectedVersion(.account(c.accountId))
        if account.status == c.status {
            throw .rejected("STATUS_UNCHANGED", "account \(c.accountId) is already \(c.status.rawValue)")
        }
        let event = AccountStatusChanged(accountId: c.accountId, status: c.status, reason: c.reason, changedBy: admin.userId)
        return d.accept([.accountStatusChanged(event)])
    }

    static func existing(_ id: String, _ d: DecisionInput) throws(StrataError) -> AccountState {
        guard let account = d.state.accounts[id] else { throw .notFound("ACCOUNT_NOT_FOUND", "no account \(id)") }
        return account
    }

    /// The user an account would be assigned to: NOT_FOUND when there is none.
    private static func assignableAgent(_ id: String, _ d: DecisionInput) throws(StrataError) -> UserState {
        guard let user = d.state.users[id] else { throw .notFound("AGENT_NOT_FOUND", "no user \(id)") }
        return user
    }

    /// REJECTED unless `user` is an APPROVED agent: only they may look after borrowers.
    private static func requireWorkingAgent(_ user: UserState) throws(StrataError) {
        guard user.role == .agent else {
            throw .rejected("NOT_AN_AGENT", "\(user.userId) is \(user.role.rawValue), not an agent")
        }
        guard user.status == .approved else {
            throw .rejected("AGENT_NOT_APPROVED", "agent \(user.userId) is \(user.status.rawValue), not APPROVED")
        }
    }
}
