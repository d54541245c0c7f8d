import Foundation
import StrataCore
import StrataTesting
import Testing

@testable import StrataCLI

/// `strata demo`'s arguments, refused before anything is sent: on a data directory made as an
/// operator makes one, with no service listening where the demo would send.
@Suite struct DemoCommandTests {
    /// The data directory's options, and a commands endpoint nobody answers on (an answer would
    /// mean the demo sent something).
    private func options(_ data: URL) throws -> [String] {
        ["--data", data.path, "--commands", "tcp://127.0.0.1:\(try freeLoopbackPort())", "--timeout", "1"]
    }

    @Test func theDefaultPrefixHasFourHexDigits() {
        #expect(DemoCommand.defaultPrefix(0x4ad) == "demo-04ad")
        #expect(DemoCommand.defaultPrefix(0) == "demo-0000")
        #expect(DemoCommand.defaultPrefix(0xf) == "demo-000f")
        #expect(DemoCommand.defaultPrefix(0xbeef) == "demo-beef")
    }

    /// Usernames and emails are unique whatever their case, so `CaseX` and `casex` would collide:
    /// capitals are refused, naming the characters a prefix may have.
    @Test func aPrefixWithCapitalsIsAUsageError() throws {
        try withTemporaryDirectory { data in
            try ServiceProcess.prepare(data)
            let options = try options(data)
            let message =
                "strata demo: --prefix must be 1–24 characters of [a-z0-9_-]: usernames and emails are unique "
                + "whatever their case, so prefixes that differ only in case would collide\n"
            for prefix in ["CaseX", "demo-A1", "a-prefix-of-25-characters", "demo.1"] {
                let result = try strata(["demo", "--prefix", prefix] + options, expecting: 2)
                #expect(result.stderr == message, "\(prefix): \(result.stderr)")
                #expect(result.stdout.isEmpty, "\(prefix): \(result.stdout)")
            }
        }
    }

    /// The admin it decides as must be an approved admin in the store: another id saw most of the
    /// month refused while the agents' sign-ups, which need no admin, were appended under the
    /// prefix. Nothing is sent, and the message says what the id is.
    @Test func anAdminThatIsNoApprovedAdminIsRefusedBeforeSending() throws {
        try withTemporaryDirectory { data in
            try ServiceProcess.prepare(data)
            let options = try options(data)
            let store = data.path + "/events.db"
            let ghost = try strata(["demo", "--prefix", "ghost", "--admin", "ghost"] + options, expecting: 2)
            #expect(
                ghost.stderr
                    == "strata demo: --admin ghost is no user in \(store); the demo decides as an approved admin\n")
            #expect(ghost.stdout.isEmpty, "\(ghost.stdout)")
            // The admin `prepare` made is taken, and the demo goes on to send (nobody answers here).
            let admin = try strata(
                ["demo", "--prefix", "real", "--admin", ServiceProcess.admin] + options, expecting: 2)
            #expect(admin.stderr.contains("no reply from"), "\(admin.stderr)")
        }
    }

    /// The demo acts for admins and agents: a key narrowed to one role saw the other's commands
    /// refused (FORBIDDEN KEY_ROLE_NOT_PERMITTED) and half a month appended. Without --key such a key
    /// is passed over for one that may act for both; named with --key, it is refused before sending.
    @Test func theKeyMustActForAdminsAndAgents() throws {
        try withTemporaryDirectory { data in
            try strata(
                ["keys", "new", "mobile", "--scope", "commands", "--roles", "AGENT", "--data", data.path],
                expecting: 0)
            try strata(
                ["admin", "bootstrap", "--id", "root", "--username", "root", "--email", "root@example.com"]
                    + ["--data", data.path],
                expecting: 0)
            let demo = ["demo", "--prefix", "roles"] + (try options(data))
            let none = try strata(demo, expecting: 2)
            #expect(
                none.stderr
                    == "strata demo: no key with the commands scope that may act for ADMIN and AGENT in "
                    + "\(data.path)/keys.json; create one with `strata keys new ID --scope commands`\n")
            #expect(none.stdout.isEmpty, "\(none.stdout)")
            let named = try strata(demo + ["--key", "mobile"], expecting: 2)
            #expect(
                named.stderr
                    == "strata demo: key mobile may act only for AGENT, and this acts for ADMIN and AGENT; name a "
                    + "key not narrowed to other roles\n")
            #expect(named.stdout.isEmpty, "\(named.stdout)")
        }
    }

    /// With nobody answering, the tally counts what was sent, not only what was answered: it said
    /// `sent 0 commands` of a month handed to the endpoint, which a service that took them and
    /// stopped before answering may well have decided.
    @Test func commandsLeftUnansweredAreCountedAsSent() throws {
        try withTemporaryDirectory { data in
            try ServiceProcess.prepare(data)
            let result = try strata(["demo", "--prefix", "silent"] + options(data), expecting: 2)
            let tally = try #require(result.stdout.split(separator: "\n").first { $0.hasPrefix("sent ") })
            let sent = try #require(Int(tally.split(separator: " ")[1]), "\(tally)")
            #expect(sent > 100, "\(tally)")
            #expect(tally == "sent \(sent) commands: 0 accepted, 0 refused, \(sent) unanswered")
            #expect(result.stderr.contains("(0 answered, \(sent) awaited)"), "\(result.stderr)")
        }
    }

    /// The service refuses a business date after its today (FUTURE_DATE) and a loan request dated
    /// more than 366 days back (TOO_FAR_IN_PAST), and the demo dates its oldest loan request 130
    /// days before --today: any --today outside today − 236 … today is a usage error that says
    /// the range, and nothing is sent.
    @Test func aTodayTheServiceWouldRefuseIsAUsageError() throws {
        try withTemporaryDirectory { data in
            try ServiceProcess.prepare(data)
            let options = try options(data)
            waitUnlessTheUTCDayLasts(seconds: 30)
            let now = Timestamp.now().date
            let earliest = now.adding(days: -236)
            let message =
                "strata demo: --today must be from \(earliest) to \(now) (today, UTC): the demo dates its oldest "
                + "loan request 130 days before --today, and the service refuses a date after its today or a loan "
                + "request dated more than 366 days back\n"
            let outside = [
                now.adding(days: 1), earliest.adding(days: -1), now.adding(days: 200), earliest.adding(days: -99),
            ]
            for today in outside {
                let result = try strata(["demo", "--prefix", "range", "--today", "\(today)"] + options, expecting: 2)
                #expect(result.stderr == message, "\(today): \(result.stderr)")
                #expect(result.stdout.isEmpty, "\(today): \(result.stdout)")
            }
            let help = try strata(["demo", "--help"], expecting: 0)
            #expect(help.stdout.contains("today (UTC, the default) or up to 236 days before"), "\(help.stdout)")
        }
    }
}

/// The wait that keeps the tests above from straddling UTC midnight.
@Test func aTestNearUTCMidnightWaitsForTheNewDay() {
    let midnight = Timestamp(LocalDate("2026-11-23")!).millisecondsSinceEpoch
    func wait(millisecondsBefore: Int64) -> Int64 {
        let now = Timestamp(millisecondsSinceEpoch: midnight - millisecondsBefore)
        return millisecondsToWait(untilTheUTCDayLasts: 30, now: now)
    }
    #expect(wait(millisecondsBefore: 31_000) == 0)
    #expect(wait(millisecondsBefore: 30_000) == 0)
    #expect(wait(millisecondsBefore: 29_000) == 30_000)
    #expect(wait(millisecondsBefore: 1) == 1_001)
    #expect(wait(millisecondsBefore: 0) == 0, "midnight itself starts a day with all of it left")
}
