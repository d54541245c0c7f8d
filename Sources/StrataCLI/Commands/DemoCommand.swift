import Bus
import CommandService
import Domain
import EventStore
import Events
import Foundation
import ProjectorRuntime
import Projections
import StrataCore
import Workloads

/// `strata demo`: a month of lending and invoicing through the running system, then the
/// dashboard from the read models.
enum DemoCommand {
    static let spec = CommandSpec(
        ["demo"], summary: "Drive a month of lending and invoicing through the running system; print the dashboard.",
        options: Configuration.options + Configuration.endpointOptions.filter { $0.name == "commands" || $0.name == "key" } + [
            OptionSpec("admin", value: "ID", help: "The approved admin who decides (default: the store's first admin)."),
            OptionSpec(
                "today", value: "DATE",
                help: "The month's last day, YYYY-MM-DD: today (UTC, the default) or up to \(todayMaxDaysBack) days "
                    + "before."),
            OptionSpec(
                "prefix", value: "TEXT",
                help: "Prefix of every id, 1–24 of [a-z0-9_-] (default: demo- and 4 random hex digits)."),
            OptionSpec("timeout", value: "SECONDS", help: "How long to wait for the service and read models (default 30)."),
        ],
        discussion: """
            Sends, as signed commands over the commands endpoint, what a small business's apps would send
            in the month ending today: agents signing up and being approved or turned away, borrower
            accounts, forty loans of every frequency and both interest methods (a few back-dated months),
            payments on time, late, partial, missing or paying off early, invoices with CGST+SGST, IGST and
            plain tax, paid, part paid, unpaid or cancelled; then, once the read models have caught up,
            cash-outs sized from each agent's collectible commission. It prints what was accepted and
            refused, waits for readmodels.db to reach the last position, and prints the dashboard.

            --today is checked against today (UTC) on this machine, where the service runs. The demo
            dates its oldest loan request \(DemoMonth.furthestBackDays) days before --today, and the service
            refuses a business date after its today, or a loan request dated more than
            \(maximumBackdatingDays) days back; so --today is today or up to \(todayMaxDaysBack) days before it,
            and any other day is a usage error.

            Every id starts with the prefix, so the demo can run any number of times against one store. The
            prefix is lowercase: usernames and emails are unique whatever their case, so two prefixes that
            differ only in case would collide. Running one prefix again sends the same commands, which the
            service answers as duplicates of the earlier ones; they are counted apart and append nothing.

            It keeps within the domain limits of the config file ("domain"), as the service reads them:
            principals are capped at the maximum, tax rates are the configured slabs, and no cash-out
            below the minimum is asked for; so give it the config file the service runs with.
            It signs with --key (or STRATA_KEY), else the key file's first key with the commands scope
            that may act for admins and agents (a key narrowed to one role is passed over, and refused
            when named).
            It reads events.db (for the admin) and readmodels.db (for the dashboard), so it runs on the
            machine that holds the data directory, as `strata up` does.

            Exit codes: 0 done, every command accepted (now or, as a duplicate, earlier); 1 a command was
            refused (now or earlier) or the read models did not catch up; 2 usage (a --today out of range, a
            prefix with capitals) or environment (no key, no admin or an --admin that is no approved admin,
            no answer from the service).
            """)

    /// How far back a loan request may be dated, as the service decides it (not configurable).
    static let maximumBackdatingDays = DomainConfiguration().maximumBackdatingDays
    /// How many days before today `--today` may be at most.
    static let todayMaxDaysBack = maximumBackdatingDays - DemoMonth.furthestBackDays

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let timeout = try arguments.integer("timeout", in: 1...3600) ?? 30
        // The arguments first, so a mistyped one is a usage error whatever the data directory holds.
        let now = Timestamp.now().date
        let today: LocalDate
        if let text = arguments.value("today") {
            guard let date = LocalDate(text) else { throw UsageError("--today must be a date YYYY-MM-DD") }
            let allowed = todayRange(now: now, limits: configuration.domain)
            guard allowed.contains(date) else {
                throw UsageError(
                    "--today must be from \(allowed.lowerBound) to \(allowed.upperBound) (today, UTC): the demo "
                        + "dates its oldest loan request \(DemoMonth.furthestBackDays) days before --today, and the "
                        + "service refuses a date after its today or a loan request dated more than "
                        + "\(configuration.domain.maximumBackdatingDays) days back")
            }
            today = date
        } else {
            today = now
        }
        let prefix = arguments.value("prefix") ?? defaultPrefix(UInt16.random(in: 0...UInt16.max))
        guard Identifier.isValid(prefix, maximumLength: 24), prefix == prefix.lowercased() else {
            throw UsageError(
                "--prefix must be 1–24 characters of [a-z0-9_-]: usernames and emails are unique whatever their "
                    + "case, so prefixes that differ only in case would collide")
        }
        let key = try configuration.signingKey(for: .commands, actingFor: [.admin, .agent])
        let admin =
            try arguments.value("admin").map { try requireAdmin($0, configuration) } ?? firstAdmin(configuration)
        let month = DemoMonth(admin: admin, prefix: prefix, today: today, limits: configuration.domain)

        printLine("demo \(prefix): the month \(month.firstDay) to \(today), decided by admin \(admin)")
        let context = try ZMQContext()
        let client = try SignedClient(
            context, endpoint: configuration.commandsEndpoint, keyId: key.key.id, secret: key.key.secret,
            curve: key.curve, watchingConnections: true)
        defer { client.close() }
        var tally = Tally()
        let send = { (commands: [CommandBody]) throws in
            tally.sent += commands.count
            var bodies = ListedBodies(commands.map(\.json))
            try SendCommand.pipeline(
                &bodies, through: client, timeoutSeconds: timeout, endpoint: configuration.commandsEndpoint,
                curve: key.curve != nil
            ) { tally.count($0) }
        }

        do {
            try send(month.commands())
            let readModels = try waitForReadModels(configuration, upTo: tally.lastPosition, timeoutSeconds: timeout)
            // What each agent could collect before this prefix's own cash-outs, which a run of it
            // before took out of `collectible_cents` (pending or approved): sized from what is left,
            // a rerun's cash-outs reused their ids with other amounts (CONFLICT COMMAND_ID_REUSED)
            // where they should be answered as duplicates, as every other command is.
            let like = prefix.replacingOccurrences(of: "_", with: "\\_")
            let collectible = try readModels.table(
                """
                SELECT e.agent_id, e.collectible_cents + coalesce((
                    SELECT sum(c.amount_cents) FROM cashouts c WHERE c.agent_id = e.agent_id
                    AND c.cashout_id LIKE ? ESCAPE '\\' AND c.status IN ('PENDING', 'APPROVED')), 0)
                FROM agent_earnings e WHERE e.agent_id LIKE ? ESCAPE '\\'
                """, [.text(like + "-cashout-%"), .text(like + "-%")])
            var byAgent: [String: Int64] = [:]
            for row in collectible.rows {
                if case .text(let agent) = row[0], case .integer(let cents) = row[1] { byAgent[agent] = cents }
            }
            try send(month.cashouts(collectible: byAgent))
        } catch {
            // What was sent and appended before the failure: the demo's commands are in the
            // store whether or not it got to the end.
            tally.report()
            throw error
        }
        tally.report()

        let final = try waitForReadModels(configuration, upTo: tally.lastPosition, timeoutSeconds: timeout)
        printLine("")
        try Dashboard.print(final, today: today)
        return tally.allAccepted ? 0 : 1
    }

    /// The days `--today` may be, the service's today being `now`: none after it (a business date
    /// after the service's today is FUTURE_DATE), and none so early that the oldest loan request,
    /// `DemoMonth.furthestBackDays` before `--today`, is dated further back than the service
    /// allows (TOO_FAR_IN_PAST, and every later command on that loan NOT_FOUND).
    static func todayRange(now: LocalDate, limits: DomainConfiguration) -> ClosedRange<LocalDate> {
        now.adding(days: DemoMonth.furthestBackDays - limits.maximumBackdatingDays)...now
    }

    /// `demo-` and four hex digits, zero-padded so that every default prefix has the same length.
    static func defaultPrefix(_ random: UInt16) -> String {
        let digits = String(random, radix: 16)
        return "demo-" + String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// What the replies said. A reply with `"duplicate":true` is the service answering a command
    /// it decided before (the same prefix run again): counted apart, since it appended nothing
    /// now, and its positions are those of the earlier run.
    struct Tally {
        /// The commands handed to the service, answered or not: a batch is sent whole at once, the
        /// demo's being well within `SendCommand.window`.
        var sent = 0
        var accepted = 0
        var refused: [String: Int] = [:]
        /// Answers from the journal: accepted then, or refused then (by reason).
        var duplicates = 0
        var refusedBefore: [String: Int] = [:]
        /// The events appended now, and their first and last positions.
        var events = 0
        var firstPosition: Int64?
        var lastAppended: Int64 = 0
        /// The last position any reply names, duplicates' too: what the read models must reach.
        var lastPosition: Int64 = 0

        mutating func count(_ reply: [UInt8]) {
            guard let json = try? JSONParser.parse(reply) else {
                refused["UNREADABLE", default: 0] += 1
                return
            }
            let duplicate = json["duplicate"] == .bool(true)
            if json["ok"] == .bool(true) {
                if duplicate { duplicates += 1 } else { accepted += 1 }
                for event in json["events"]?.arrayValue ?? [] {
                    guard let position = event["position"]?.integerValue else { continue }
                    lastPosition = max(lastPosition, position)
                    guard !duplicate else { continue }
                    events += 1
                    firstPosition = min(firstPosition ?? position, position)
                    lastAppended = max(lastAppended, position)
                }
            } else {
                let code = json["error"]?["code"]?.stringValue ?? "?"
                let reason = json["error"]?["reason"]?.stringValue ?? ""
                if duplicate {
                    duplicates += 1
                    refusedBefore["\(code) \(reason)", default: 0] += 1
                } else {
                    refused["\(code) \(reason)", default: 0] += 1
                }
            }
        }

        /// Whether every command stands accepted, now or by an earlier run.
        var allAccepted: Bool { refused.isEmpty && refusedBefore.isEmpty }

        func report() {
            let refusals = refused.values.reduce(0, +)
            let answered = duplicates > 0 ? "\(duplicates) answered as duplicates of earlier commands, " : ""
            // Commands left without a reply (the service stopped, or never ran) were sent all the
            // same and may have been decided: counted as sent, and said to be unanswered.
            let unanswered = sent - (accepted + duplicates + refusals)
            printLine(
                "sent \(sent) commands: \(accepted) accepted, \(answered)\(refusals) refused"
                    + (unanswered > 0 ? ", \(unanswered) unanswered" : ""))
            for (why, count) in refused.sorted(by: { $0.key < $1.key }) { printLine("  refused \(count)× \(why)") }
            for (why, count) in refusedBefore.sorted(by: { $0.key < $1.key }) {
                printLine("  refused earlier \(count)× \(why)")
            }
            if let first = firstPosition {
                printLine("appended \(events) events, positions \(first) to \(lastAppended)")
            } else {
                printLine("appended no events")
            }
        }
    }

    /// Polls readmodels.db until its checkpoint reaches `position`.
    static func waitForReadModels(
        _ configuration: Configuration, upTo position: Int64, timeoutSeconds: Int64
    ) throws -> ProjectionSnapshot {
        let deadline = ContinuousClock.now + .seconds(timeoutSeconds)
        while true {
            let snapshot: ProjectionSnapshot?
            do throws(ProjectorError) {
                snapshot = try ProjectionSnapshot(path: configuration.readModelsPath)
            } catch {
                throw CommandFailure.problem(error.message)
            }
            if let snapshot {
                if let stop = snapshot.stop { throw CommandFailure.problem("the read models are stopped: \(stop)") }
                if snapshot.checkpoint >= position { return snapshot }
            }
            guard ContinuousClock.now < deadline else {
                throw CommandFailure.problem(
                    "readmodels.db did not reach position \(position) within \(timeoutSeconds) s; "
                        + "is `strata project readmodels` running (strata status)?")
            }
            usleep(50_000)
        }
    }

    /// `id` when it is an approved admin in the store. Any other actor sees most of the demo refused
    /// (UNKNOWN_ACTOR, ACTOR_NOT_APPROVED) while the agents' sign-ups, which need no admin, are
    /// appended: half a month left in the store under the prefix, for a mistyped --admin.
    static func requireAdmin(_ id: String, _ configuration: Configuration) throws -> String {
        let store = try VerifyCommand.openReadOnly(configuration.eventStorePath)
        var user: UserState?
        if let stream = StreamName(category: "user", id: id) {
            let events: [RecordedEvent]
            do {
                events = try store.events(in: stream)
            } catch {
                throw CommandFailure.environment("cannot read \(configuration.eventStorePath): \(error)")
            }
            for event in events {
                if let decoded = try? event.decoded() { user = UserState.evolve(user, decoded) }
            }
        }
        guard let user, user.role == .admin, user.status == .approved else {
            let what =
                user.map { "a user with role \($0.role.rawValue) and status \($0.status.rawValue)" } ?? "no user"
            throw CommandFailure.environment(
                "--admin \(id) is \(what) in \(configuration.eventStorePath); the demo decides as an approved admin")
        }
        return id
    }

    /// The first approved admin in the store: the one `admin bootstrap` made.
    static func firstAdmin(_ configuration: Configuration) throws -> String {
        let store = try VerifyCommand.openReadOnly(configuration.eventStorePath)
        var after: Int64 = 0
        while true {
            let page: [RecordedEvent]
            do {
                page = try store.events(after: after, limit: 1000, filter: .types([UserRegistered.eventType]))
            } catch {
                throw CommandFailure.environment("cannot read \(configuration.eventStorePath): \(error)")
            }
            guard let last = page.last else { break }
            for event in page {
                if case .userRegistered(let user)? = try? event.decoded(), user.role == .admin, user.status == .approved {
                    return user.userId
                }
            }
            after = last.position
        }
        throw CommandFailure.environment(
            "no admin in \(configuration.eventStorePath): run `strata admin bootstrap` first, or pass --admin ID")
    }
}
