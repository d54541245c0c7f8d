import CommandService
import Domain
import EventStore
import Events
import Foundation
import StrataCore
import SubjectKeys

/// `strata admin bootstrap`: the operator act that creates the first approved ADMIN.
///
/// It writes to the store directly, so it takes the writer lock: it refuses while
/// `strata serve` runs, and once any admin exists.
enum AdminBootstrapCommand {
    static let spec = CommandSpec(
        ["admin", "bootstrap"], summary: "Register the first approved ADMIN, directly in the store (before serve).",
        options: Configuration.options + [
            OptionSpec("id", value: "ID", help: "The admin's user id."),
            OptionSpec("username", value: "NAME", help: "3–32 characters of [A-Za-z0-9._-], unique."),
            OptionSpec("email", value: "EMAIL", help: "A valid email address, unique."),
        ],
        discussion: """
            Appends UserRegistered {role ADMIN, status APPROVED} to stream user-ID as an operator act
            (command id operator-bootstrap-ID, actor operator), recorded and audited like any event.

            Exit codes: 0 registered, 1 refused (the store is held by a running serve, an admin exists,
            the id, username or email is taken, events.db holds no event while a projection in DATA
            has applied some: emptied or removed, restore it; subject-keys.db is missing while
            events.db holds personal data sealed under its keys: put it back), 2 usage or environment
            (a config file's relative data directory that holds no event, where the working directory's
            reading of it holds a store with events: write it as an absolute path).
            """)

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let given = try arguments.required("id", "username", "email")
        let (id, username, email) = (given[0], given[1], given[2])
        var problems: [String] = []
        if !Identifier.isValid(id) { problems.append("--id must be 1–64 characters of [A-Za-z0-9_-]") }
        if !FieldRules.isValidUsername(username) { problems.append("--username must be 3–32 characters of [A-Za-z0-9._-]") }
        if !FieldRules.isValidEmail(email) { problems.append("--email is not a valid email address") }
        guard problems.isEmpty else { throw UsageError(problems.joined(separator: "; ")) }

        try WorkingDirectoryHistory.requireNone(configuration)
        try Directories.create(configuration.dataDirectory, "the data directory", mode: 0o700)
        try EarlierHistory.requireNone(configuration)
        let store: SQLiteEventStore
        do {
            store = try SQLiteEventStore(path: configuration.eventStorePath)
        } catch let error as StoreError where error.kind == .locked {
            throw CommandFailure.problem("refused: \(error.message)")
        } catch {
            throw CommandFailure.environment("cannot open \(configuration.eventStorePath): \(error)")
        }

        // Before the key store is opened, which makes one where there is none.
        let missingKeyStore: String?
        do throws(StoreError) {
            missingKeyStore = try SealedHistory.missingKeyStore(
                configuration.subjectKeysPath, beside: store, storePath: configuration.eventStorePath)
        } catch {
            throw CommandFailure.problem("refused: cannot read \(configuration.eventStorePath): \(error.message)")
        }
        if let missingKeyStore { throw CommandFailure.problem("refused: \(missingKeyStore)") }
        let sealer = try openSealer(configuration.subjectKeysPath)

        // Refuse when an admin exists, or the username or email is taken. Taken is what the
        // deciders' directory says, so that a name in another case is taken here as it is there.
        var directory = Directory()
        var after: Int64 = 0
        while true {
            let batch = try store.events(after: after, limit: 1000, filter: .types([UserRegistered.eventType]))
            guard let last = batch.last else { break }
            for recorded in batch {
                let event = try recorded.decoded().openingPersonalData(stream: recorded.stream, with: sealer.opener)
                guard case .userRegistered(let user) = event else { continue }
                if user.role == .admin {
                    throw CommandFailure.problem("refused: an admin exists already (\(user.userId)); admins add admins with RegisterUser")
                }
                directory.apply(event)
            }
            after = last.position
        }
        if directory.userId(forUsername: username) != nil {
            throw CommandFailure.problem("refused: username \(username) is taken")
        }
        if directory.userId(forEmail: email) != nil {
            throw CommandFailure.problem("refused: that email belongs to another user")
        }

        switch try registerAdmin(in: store, sealer: sealer, id: id, username: username, email: email).outcome {
        case .accepted(let events):
            printLine("registered admin \(id) (\(username)) at position \(events[0].position)")
            return 0
        case .refused(let error):
            throw CommandFailure.problem(
                error.reason == "WRONG_EXPECTED_VERSION" ? "refused: user \(id) exists already" : "refused: \(error.message)")
        }
    }

    /// The key store of the data directory, for writing: bootstrap holds the event store's
    /// writer lock, so no service writes it meanwhile.
    static func openSealer(_ path: String) throws -> PersonalDataSealer {
        do throws(SubjectKeyStoreError) {
            return try PersonalDataSealer(store: SubjectKeyStore(writingAt: path))
        } catch {
            throw CommandFailure.environment(error.message)
        }
    }

    /// The operator act itself: UserRegistered {ADMIN, APPROVED} on `user-ID`, with command
    /// id `operator-bootstrap-ID` and actor `operator`, expecting the stream not to exist. The
    /// email is sealed like any personal data, its key stored before the event.
    static func registerAdmin(
        in store: SQLiteEventStore, sealer: PersonalDataSealer, id: String, username: String, email: String
    ) throws -> CommandResult {
        let stream = StreamName(category: "user", id: id)!
        let clear = UserRegistered(
            userId: id, username: username, email: PersonalData(email), role: .admin, status: .approved)
        let sealed = try sealer.seal(.userRegistered(clear), stream: stream.description)
        try sealer.storeNewKeys(at: Timestamp.now())
        guard case .userRegistered(let event) = sealed else { preconditionFailure("sealing keeps the event's type") }
        let body = CanonicalJSON.bytes(["id": .string(id), "username": .string(username), "email": .string(email)])
        let write = try CommandWrite(
            commandId: "operator-bootstrap-\(id)",
            bodyDigest: BodyDigest(store: sealer.store).of(sha256: HashChain.sha256(body)), actor: "operator",
            commandType: "BootstrapAdmin",
            decision: .append([NewEvent(stream: stream, event: event)], expectations: [stream: .exactly(0)]))
        return try store.append(write)
    }
}
