import Domain
import Events
import StrataCore
import StrataTesting
import Testing

// Given/when/then helpers shared by the decider tests. They forward `sourceLocation`, so
// a failure points at the test's line.

func date(_ text: String) -> LocalDate { LocalDate(text)! }
func instant(_ text: String) -> Timestamp { Timestamp(text)! }

/// Then: exactly these events, in this order.
func expectEvents(
    _ decision: Decision, _ expected: [StrataEvent], sourceLocation: SourceLocation = #_sourceLocation
) {
    switch decision {
    case .accepted(let accepted):
        #expect(accepted.events == expected, sourceLocation: sourceLocation)
    case .refused(let error):
        Issue.record("expected events, got refusal \(error)", sourceLocation: sourceLocation)
    }
}

/// Then: exactly this refusal (code and reason; and the details, when given).
func expectRefusal(
    _ decision: Decision, _ code: StrataError.Code, _ reason: String?,
    details: [StrataError.FieldProblem]? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    switch decision {
    case .accepted(let accepted):
        Issue.record("expected \(code.rawValue) \(reason ?? ""), got events \(accepted.events)", sourceLocation: sourceLocation)
    case .refused(let error):
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(error.reason == reason, "\(error)", sourceLocation: sourceLocation)
        if let details {
            #expect(error.details == details, "\(error)", sourceLocation: sourceLocation)
        }
    }
}

/// Then: INVALID listing exactly these `field: reason` problems, in order.
func expectInvalid(
    _ decision: Decision, _ problems: [(String, String)], sourceLocation: SourceLocation = #_sourceLocation
) {
    let details = problems.map { StrataError.FieldProblem(field: $0.0, reason: $0.1) }
    expectRefusal(decision, .invalid, details.first?.reason, details: details, sourceLocation: sourceLocation)
}

/// The worked loan of the decider and calculator tests (the catalog's sample): 1,000,000
/// cents at 400 bp a month over three monthly installments (REDUCING), approved 2026-11-20.
/// EMI = round(1,000,000 × 0.04 × 1.04³ / (1.04³ − 1)) = 360,349; 1,081,046 to repay in all.
let workedSchedule = [
    ScheduleEntry(
        number: 1, dueDate: date("2026-12-20"), principalCents: 320_349, interestCents: 40_000, totalCents: 360_349,
        remainingBalanceCents: 679_651),
    ScheduleEntry(
        number: 2, dueDate: date("2027-01-19"), principalCents: 333_163, interestCents: 27_186, totalCents: 360_349,
        remainingBalanceCents: 346_488),
    ScheduleEntry(
        number: 3, dueDate: date("2027-02-18"), principalCents: 346_488, interestCents: 13_860, totalCents: 360_348,
        remainingBalanceCents: 0),
]

/// The people of the lending tests.
enum People {
    static let admin = "admin-1"
    /// An approved agent; `account` is theirs.
    static let agent = "agent-7"
    /// Another approved agent.
    static let otherAgent = "agent-9"
    /// An agent still waiting for approval.
    static let pendingAgent = "agent-p"
    static let account = "acct-1"
}

extension DomainScenario {
    /// Today is 2026-11-20. An approved admin, two approved agents, a pending agent, and
    /// an ACTIVE account assigned to `People.agent`.
    static func lending(configuration: DomainConfiguration = .init()) -> DomainScenario {
        var scenario = DomainScenario(configuration: configuration)
        scenario.given(
            .userRegistered(
                UserRegistered(userId: People.admin, username: "root", email: "root@example.com", role: .admin, status: .approved)),
            .userRegistered(
                UserRegistered(userId: People.agent, username: "ravi", email: "ravi@example.com", role: .agent, status: .pending)),
            .agentApproved(AgentApproved(agentId: People.agent, approvedBy: People.admin, approvedAt: instant("2026-11-01T09:00:00.000Z"))),
            .userRegistered(
                UserRegistered(userId: People.otherAgent, username: "meena", email: "meena@example.com", role: .agent, status: .pending)),
            .agentApproved(AgentApproved(agentId: People.otherAgent, approvedBy: People.admin, approvedAt: instant("2026-11-01T09:05:00.000Z"))),
            .userRegistered(
                UserRegistered(userId: People.pendingAgent, username: "pending", email: "pending@example.com", role: .agent, status: .pending)),
            .accountOpened(
                AccountOpened(
                    accountId: People.account, name: "Lakshmi Devi", phone: "+919845012345", address: "4/2 Temple Street, Mysuru",
                    assignedAgentId: People.agent, openedBy: People.agent, status: .active))
        )
        return scenario
    }
}
