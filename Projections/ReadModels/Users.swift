import Events
import StrataCore

/// Users and agents by status: who may use the system, as what, and who decided it.
///
/// The admin screens list pending agents and approve or reject them; analysts count
/// agents by status. One row per user, keyed by `user_id`, with the latest profile.
///
/// - `UserRegistered` inserts the row (agents PENDING, admins APPROVED); `registered_by`
///   is the event's actor (the agent itself, an admin, or `operator`).
/// - `AgentApproved` / `AgentRejected` set the status and who decided when (the approval's
///   `approvedAt`; for a rejection, the instant it was recorded).
/// - `ProfileUpdated` overwrites only the fields it carries.
/// - `PersonalDataErased` of a USER replaces the user's personal columns with `[erased]`.
public struct Users: Projection {
    public init() {}

    public var name: String { "users" }

    public var categories: [String]? { ["user"] }

    public var schema: ProjectionSchema {
        ProjectionSchema(
            version: 1,
            statements: [
                """
                CREATE TABLE users (
                    user_id          TEXT PRIMARY KEY,
                    username         TEXT NOT NULL,
                    email            TEXT NOT NULL,
                    role             TEXT NOT NULL,
                    status           TEXT NOT NULL,
                    full_name        TEXT,
                    phone            TEXT,
                    address          TEXT,
                    date_of_birth    TEXT,
                    registered_at    TEXT NOT NULL,
                    registered_by    TEXT NOT NULL,
                    decided_by       TEXT,
                    decided_at       TEXT,
                    rejection_reason TEXT
                )
                """,
                "CREATE INDEX users_by_role_status ON users (role, status)",
            ])
    }

    public func apply(_ event: ProjectedEvent, to tables: any ProjectionTables) throws {
        switch event.event {
        case .userRegistered(let e):
            try tables.run(
                Self.insert,
                [
                    .text(e.userId), .text(e.username), .text(e.email.value), .text(e.role.rawValue),
                    .text(e.status.rawValue), .text(event.recordedAt.description), .text(event.metadata.actor),
                ])
        case .agentApproved(let e):
            try tables.update(
                Self.approve, [.text(e.approvedBy), .text(e.approvedAt.description), .text(e.agentId)],
                else: "AgentApproved for agent \(e.agentId), who has no users row")
        case .agentRejected(let e):
            try tables.update(
                Self.reject,
                [.text(e.rejectedBy), .text(event.recordedAt.description), .text(e.reason), .text(e.agentId)],
                else: "AgentRejected for agent \(e.agentId), who has no users row")
        case .profileUpdated(let e):
            try tables.update(
                Self.updateProfile,
                [
                    .text(e.fullName?.value), .text(e.phone?.value), .text(e.address?.value),
                    .text(e.dateOfBirth?.value), .text(e.userId),
                ],
                else: "ProfileUpdated for user \(e.userId), who has no users row")
        case .personalDataErased(let e) where e.kind == .user:
            try tables.run(Self.erase, [.text(e.subjectId)])
        default:
            break
        }
    }

    private static let insert = ProjectionStatement(
        """
        INSERT INTO users (user_id, username, email, role, status, registered_at, registered_by)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        """)
    private static let approve = ProjectionStatement(
        """
        UPDATE users SET status = 'APPROVED', decided_by = ?, decided_at = ?, rejection_reason = NULL
        WHERE user_id = ?
        """)
    private static let reject = ProjectionStatement(
        """
        UPDATE users SET status = 'REJECTED', decided_by = ?, decided_at = ?, rejection_reason = ?
        WHERE user_id = ?
        """)
    private static let updateProfile = ProjectionStatement(
        """
        UPDATE users SET full_name = coalesce(?, full_name), phone = coalesce(?, phone),
          address = coalesce(?, address), date_of_birth = coalesce(?, date_of_birth)
        WHERE user_id = ?
        """)
    private static let erase = ProjectionStatement(
        """
        UPDATE users SET email = '[erased]',
          full_name = CASE WHEN full_name IS NOT NULL THEN '[erased]' END,
          phone = CASE WHEN phone IS NOT NULL THEN '[erased]' END,
          address = CASE WHEN address IS NOT NULL THEN '[erased]' END,
          date_of_birth = CASE WHEN date_of_birth IS NOT NULL THEN '[erased]' END
        WHERE user_id = ?
        """)
}
