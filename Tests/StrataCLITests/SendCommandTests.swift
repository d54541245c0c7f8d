import Foundation
import StrataCore
import StrataTesting
import Testing

// `strata send` and `strata forget` where no service is needed: their input, the endpoint and
// the key, each a usage or environment error (exit 2) found before anything is sent.

/// Runs `strata ARGUMENTS` through the shell, with `redirection` (`< "$DIR"`, `<&-`) applied
/// to it and `DIR` set to `directory`.
private func strataRedirected(_ arguments: [String], _ redirection: String, directory: URL) throws
    -> ChildProcess.Result
{
    try ChildProcess.run(
        URL(fileURLWithPath: "/bin/sh"),
        ["-c", "exec \"$@\" \(redirection)", "sh", ChildProcess.product("strata").path] + arguments,
        environment: ["DIR": directory.path])
}

@Suite("strata send and forget, before sending")
struct SendCommandTests {
    /// Standard input that cannot be read (a directory, or closed) is named, not a crash.
    @Test(arguments: [("< \"$DIR\"", "Is a directory"), ("<&-", "Bad file descriptor")])
    func unreadableStandardInputIsAnEnvironmentError(_ redirection: String, _ reason: String) throws {
        try withTemporaryDirectory { dir in
            try strata(["keys", "new", "k", "--scope", "commands", "--data", dir.path], expecting: 0)
            let result = try strataRedirected(
                ["send", "-", "--data", dir.path, "--key", "k"], redirection, directory: dir)
            #expect(result.exitCode == 2, "\(result.stderr)")
            #expect(result.stderr == "strata send: cannot read standard input: \(reason)\n")
            #expect(result.stdout.isEmpty)
        }
    }

    /// An endpoint libzmq cannot connect to is the user's to fix, named as such.
    @Test(arguments: [["send", "-"], ["forget", "--subject", "acct-1", "--reason", "request", "--actor", "admin-1"]])
    func anEndpointThatCannotBeConnectedToIsAnEnvironmentError(_ command: [String]) throws {
        try withTemporaryDirectory { dir in
            try strata(["keys", "new", "k", "--scope", "commands", "--data", dir.path], expecting: 0)
            let result = try strata(
                command + ["--data", dir.path, "--key", "k", "--commands", "garbage"], expecting: 2)
            #expect(
                result.stderr.hasPrefix("strata \(command[0]): cannot connect to the commands endpoint garbage: "),
                "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
    }

    /// The subject is an id: one the service would refuse is a usage error, found before sending.
    @Test(arguments: ["acct 1", "acct/1", String(repeating: "a", count: 65)])
    func forgetChecksTheSubjectId(_ subject: String) throws {
        try withTemporaryDirectory { dir in
            try strata(["keys", "new", "k", "--scope", "commands", "--data", dir.path], expecting: 0)
            let result = try strata(
                ["forget", "--subject", subject, "--reason", "request", "--actor", "admin-1", "--data", dir.path]
                    + ["--key", "k", "--commands", "tcp://127.0.0.1:1", "--timeout", "1"],
                expecting: 2)
            #expect(result.stderr == "strata forget: --subject must be 1–64 characters of [A-Za-z0-9_-]\n")
        }
    }

    /// The options left out are named, where the message listed all three whichever was missing.
    @Test(arguments: [
        (["--subject", "acct-1", "--actor", "admin-1"], "missing --reason"),
        (["--reason", "request"], "missing --subject, --actor"),
    ])
    func forgetNamesTheOptionsLeftOut(_ given: [String], _ missing: String) throws {
        try withTemporaryDirectory { dir in
            let result = try strata(["forget", "--data", dir.path] + given, expecting: 2)
            #expect(result.stderr == "strata forget: \(missing) (--subject, --reason and --actor are all required)\n")
        }
    }

    /// The other arguments too: whatever the service would refuse unread (MALFORMED) or as INVALID
    /// whatever the store holds is a usage error, found before sending, where a wrong --kind, a
    /// blank reason or a mistyped actor went to the service and came back as a refusal (exit 1).
    @Test(arguments: [
        (["--kind", "FOO"], "--kind must be one of ACCOUNT, PARTY, USER, got 'FOO'"),
        (["--actor", "admin 1"], "--actor must be 1–64 characters of [A-Za-z0-9_-]"),
        (["--id", "forget/1"], "--id must be 1–64 characters of [A-Za-z0-9_-]"),
        (["--reason", "   "], "the service would refuse this command as INVALID: --reason EMPTY"),
        (
            ["--reason", String(repeating: "r", count: 501)],
            "the service would refuse this command as INVALID: --reason TOO_LONG"
        ),
        (["--reason", "a\u{7}b"], "the service would refuse this command as INVALID: --reason CONTROL_CHARACTER"),
    ])
    func forgetChecksItsArgumentsBeforeSending(_ change: [String], _ message: String) throws {
        try withTemporaryDirectory { dir in
            try strata(["keys", "new", "k", "--scope", "commands", "--data", dir.path], expecting: 0)
            var arguments = ["--subject": "acct-1", "--reason": "request", "--actor": "admin-1"]
            arguments[change[0]] = change[1]
            let result = try strata(
                ["forget", "--data", dir.path, "--key", "k", "--commands", "tcp://127.0.0.1:1", "--timeout", "1"]
                    + arguments.sorted(by: { $0.key < $1.key }).flatMap { [$0.key, $0.value] },
                expecting: 2)
            #expect(result.stderr == "strata forget: \(message)\n")
            #expect(result.stdout.isEmpty)
        }
    }

    /// `forget` acts for an admin: a key narrowed to other roles would see it refused (FORBIDDEN
    /// KEY_ROLE_NOT_PERMITTED), so without --key the first key that may act for an admin is taken,
    /// and a narrowed one named with --key is refused before anything is sent.
    @Test func forgetSignsWithAKeyThatMayActForAnAdmin() throws {
        try withTemporaryDirectory { dir in
            try strata(
                ["keys", "new", "mobile", "--scope", "commands", "--roles", "AGENT", "--data", dir.path], expecting: 0)
            let forget =
                ["forget", "--subject", "acct-1", "--reason", "request", "--actor", "admin-1", "--data", dir.path]
                + ["--commands", "tcp://127.0.0.1:1", "--timeout", "1"]
            let none = try strata(forget, expecting: 2)
            #expect(
                none.stderr
                    == "strata forget: no key with the commands scope that may act for ADMIN in \(dir.path)/keys.json; "
                    + "create one with `strata keys new ID --scope commands`\n")
            let named = try strata(forget + ["--key", "mobile"], expecting: 2)
            #expect(
                named.stderr
                    == "strata forget: key mobile may act only for AGENT, and this acts for ADMIN; name a key not "
                    + "narrowed to other roles\n")
            // With a key for every role after it, that one is taken, and the command sent.
            try strata(["keys", "new", "svc", "--scope", "commands", "--data", dir.path], expecting: 0)
            let sent = try strata(forget, expecting: 2)
            #expect(
                sent.stderr.hasPrefix("strata forget: no reply from tcp://127.0.0.1:1 within 1 s"), "\(sent.stderr)")
        }
    }

    /// Without --key they sign with the key file's first key with the commands scope, as `demo`
    /// does; a key without that scope is refused before anything is sent.
    @Test(arguments: [["send", "-"], ["forget", "--subject", "acct-1", "--reason", "request", "--actor", "admin-1"]])
    func theKeyNeedsTheCommandsScope(_ command: [String]) throws {
        try withTemporaryDirectory { dir in
            try strata(["keys", "new", "reader", "--scope", "history", "--data", dir.path], expecting: 0)
            let options = ["--data", dir.path, "--commands", "tcp://127.0.0.1:1", "--timeout", "1"]
            let none = try strata(command + options, expecting: 2)
            #expect(
                none.stderr
                    == "strata \(command[0]): no key with the commands scope in \(dir.path)/keys.json; create one with "
                    + "`strata keys new ID --scope commands`\n")
            let named = try strata(command + options + ["--key", "reader"], expecting: 2)
            #expect(named.stderr == "strata \(command[0]): key reader lacks the commands scope this needs\n")
        }
    }
}
