import Events
import StrataCore

/// Users and agents: sign-up, approval, profiles.
enum UserDecisions {
    /// An agent registers itself (actor = the new user, no user needed yet); an admin is
    /// registered by an approved admin. Usernames (any case) and emails are unique.
    static func register(_ c: RegisterUser, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        switch c.role {
        case .agent:
            // Only a new user takes the role it registers with; an actor who is a user already
            // has the role the service knows, whatever the payload names.
            try d.permitByKey(d.state.users[d.actorId]?.role ?? .agent)
            guard d.actorId == c.userId else {
                throw .forbidden(
                    "AGENT_SELF_REGISTRATION_ONLY", "agents register themselves: the actor must be \(c.userId)")
            }
        case .admin:
            _ = try d.admin(doing: "register admins")
        }
        let stream = StreamRef.user(c.userId)
        try d.checkExpectedVersion(stream)
        if d.state.users[c.userId] != nil {
            throw .rejected("USER_ALREADY_EXISTS", "user \(c.userId) already exists")
        }
        if let holder = d.state.directory.userId(forUsername: c.username) {
            throw .rejected("USERNAME_TAKEN", "username \(c.username) belongs to \(holder)")
        }
        if d.state.directory.userId(forEmail: c.email.value) != nil {
            throw .rejected("EMAIL_TAKEN", "that email belongs to another user")
        }
        let event = UserRegistered(
            userId: c.userId, username: c.username, email: c.email, role: c.role,
            status: c.role == .agent ? .pending : .approved)
        return d.accept([.userRegistered(event)])
    }

    static func approve(_ c: ApproveAgent, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        let admin = try d.admin(doing: "approve agents")
        _ = try pendingAgent(c.agentId, d)
        let event = AgentApproved(agentId: c.agentId, approvedBy: admin.userId, approvedAt: d.context.now)
        return d.accept([.agentApproved(event)])
    }

    static func reject(_ c: RejectAgent, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        let admin = try d.admin(doing: "reject agents")
        _ = try pendingAgent(c.agentId, d)
        let event = AgentRejected(agentId: c.agentId, rejectedBy: admin.userId, reason: c.reason)
        return d.accept([.agentRejected(event)])
    }

    /// The user `id`, which must exist, be an agent, and still be PENDING.
    private static func pendingAgent(_ id: String, _ d: DecisionInput) throws(StrataError) -> UserState {
        guard let user = d.state.users[id] else { throw .notFound("USER_NOT_FOUND", "no user \(id)") }
        try d.checkExpectedVersion(.user(id))
        guard user.role == .agent else { throw .rejected("NOT_AN_AGENT", "\(id) is \(user.role.rawValue), not an agent") }
        guard user.status == .pending else {
            throw .rejected("AGENT_NOT_PENDING", "agent \(id) is \(user.status.rawValue), not PENDING")
        }
        return user
    }

    /// Users change their own profile whatever their status; an approved admin may
    /// change anyone's.
    static func updateProfile(_ c: UpdateProfile, _ d: DecisionInput) throws(StrataError) -> Decision.Accepted {
        let actor = try d.actor([.admin, .agent], approved: false, doing: "update profiles")
        guard let user = d.state.users[c.userId] else { throw .notFound("USER_NOT_FOUND", "no user \(c.userId)") }
        let actsAsAdmin = actor.role == .admin && actor.status == .approved
        guard actsAsAdmin || actor.userId == c.userId else {
            throw .forbidden("NOT_OWN_PROFILE", "\(actor.userId) may only update their own profile")
        }
        try d.checkExpectedVersion(.user(c.userId))
        if user.erased { throw .rejected("SUBJECT_ERASED", "user \(c.userId)'s personal data was erased") }
        let event = ProfileUpdated(
            userId: c.userId, fullName: c.fullName, phone: c.phone, address: c.address, dateOfBirth: c.dateOfBirth,
            updatedBy: actor.userId)
        return d.accept([.profileUpdated(event)])
    }
}
