import Bus
import Domain
import Events
import Foundation
import StrataCore

/// `strata forget --subject ID --reason TEXT --actor ADMIN`: the signed erasure command for
/// one data subject (docs/personal-data.md), sent like `strata send` sends any command.
enum ForgetCommand {
    static let spec = CommandSpec(
        ["forget"], summary: "Erase one data subject's personal data (crypto-shredding); print the reply.",
        options: Configuration.options
            + Configuration.endpointOptions.filter { $0.name == "commands" || $0.name == "key" } + [
            OptionSpec("subject", value: "ID", help: "The account, party or user id whose personal data goes."),
            OptionSpec("kind", value: "KIND", help: "ACCOUNT, PARTY or USER: needed when the id names several."),
            OptionSpec("reason", value: "TEXT", help: "Why (recorded in the event and the audit log)."),
            OptionSpec("actor", value: "ADMIN", help: "The approved admin who erases."),
            OptionSpec(
                "id", value: "COMMAND_ID",
                help: "The command id (default: forget-SUBJECT- and 8 random hex digits, within 64 characters)."),
            OptionSpec("timeout", value: "SECONDS", help: "How long to wait for the reply (default 30)."),
        ],
        discussion: """
            Sends EraseSubject {subjectId, kind?, reason} for --actor, signed with the key named by --key
            (which needs the commands scope and may not be narrowed to roles other than ADMIN), else with
            the key file's first key with the commands scope that may act for an admin, and prints the
            reply as one JSON line. The service records
            PersonalDataErased and destroys the subject's key: from then on its names, phones, emails,
            addresses and tax ids read as "[erased]" everywhere (the projections, rebuilds, queries as of
            any date), while its loans, invoices and amounts stay, and `strata verify` still passes.

            Without --kind the id is looked up among accounts, parties and users; an id found in more
            than one is refused (INVALID AMBIGUOUS_SUBJECT). An unknown subject is NOT_FOUND, a subject
            erased already REJECTED ALREADY_ERASED, and an actor who is not an approved admin FORBIDDEN.

            --subject, --actor and --id must be ids, --kind one of ACCOUNT, PARTY, USER, and --reason what
            the service takes (not blank, at most 500 characters, no control characters but line breaks
            and tabs); anything else is a usage error, and nothing is sent.

            Exit codes: 0 erased, 1 refused, 2 usage or environment (an argument the service would refuse
            whatever the store holds, no such key, a key without the commands scope, an endpoint that
            cannot be connected to, no reply).
            """)

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let given = try arguments.required("subject", "reason", "actor")
        let (subject, reason, actor) = (given[0], given[1], given[2])
        // What the service would refuse whatever the store holds (MALFORMED, INVALID) is a usage
        // error, found before anything is sent: exit 2, as for a mistyped option.
        for (option, value) in [("subject", subject), ("actor", actor), ("id", arguments.value("id"))] {
            guard let value, !Identifier.isValid(value) else { continue }
            throw UsageError("--\(option) must be 1–64 characters of [A-Za-z0-9_-]")
        }
        var payload: [String: JSONValue] = ["subjectId": .string(subject), "reason": .string(reason)]
        if let text = arguments.value("kind") {
            guard let kind = SubjectKind(rawValue: text.uppercased()) else {
                let kinds = SubjectKind.allCases.map(\.rawValue).joined(separator: ", ")
                throw UsageError("--kind must be one of \(kinds), got '\(text)'")
            }
            payload["kind"] = .string(kind.rawValue)
        }
        // The reason by the service's own rules (not blank, at most 500 characters, no control
        // characters but line breaks and tabs).
        if case .failure(let error) = Command.parse(
            type: EraseSubject.commandType, payload: payload, context: DecisionContext(now: .now()))
        {
            let problems = (error.details ?? []).map { problem in
                "--\(problem.field == "subjectId" ? "subject" : problem.field) \(problem.reason)"
            }
            throw UsageError("the service would refuse this command as INVALID: \(problems.joined(separator: ", "))")
        }
        let commandId = arguments.value("id") ?? defaultCommandId(subject)
        let body = CanonicalJSON.bytes(
            ["id": .string(commandId), "type": "EraseSubject", "actor": .string(actor), "payload": .object(payload)])
        let timeoutSeconds = try arguments.integer("timeout", in: 1...86_400) ?? 30

        let signing = try configuration.signingKey(for: .commands, actingFor: [.admin])
        let context = try ZMQContext()
        let client = try SendCommand.connect(context, to: configuration.commandsEndpoint, signing: signing)
        defer { client.close() }
        var accepted = false
        var bodies = ListedBodies([body])
        try SendCommand.pipeline(
            &bodies, through: client, timeoutSeconds: timeoutSeconds, endpoint: configuration.commandsEndpoint,
            curve: signing.curve != nil
        ) { reply in
            accepted = (try? JSONParser.parse(reply))?["ok"] == .bool(true)
            write(String(decoding: reply, as: UTF8.self) + "\n", to: .standardOutput)
        }
        return accepted ? 0 : 1
    }

    /// `forget-SUBJECT-` and eight random hex digits, so that running `forget` again is a new
    /// command (refused as ALREADY_ERASED) rather than a retry answered from the journal. The
    /// subject is cut short to keep the id within the 64 characters a command id may have.
    static func defaultCommandId(_ subject: String) -> String {
        let random = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let suffix = "-" + String(repeating: "0", count: 8 - random.count) + random
        return "forget-" + subject.prefix(Identifier.maximumLength - "forget-".count - suffix.count) + suffix
    }
}
