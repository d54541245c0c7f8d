import EventStore
import Foundation
import StrataCore

/// `strata verify`: recompute the hash chain over the store, check the signed checkpoints,
/// and name the first bad position.
enum VerifyCommand {
    static let spec = CommandSpec(
        ["verify"], summary: "Check the event store's hash chain and signed checkpoints; name the first bad position.",
        options: Configuration.options + [
            OptionSpec("format", value: "text|json", help: "Output format (default text)."),
            OptionSpec(
                "public-key", value: "HEX|FILE",
                help: "The checkpoint key to trust: 64 hex characters or a file holding them "
                    + "(default DATA/checkpoint.pub if present)."),
            OptionSpec(
                "expect", value: "P:HASH",
                help: "Also require the chain's hash at position P to be HASH (a copy kept elsewhere)."),
        ],
        discussion: """
            Reads the store read-only, so it runs beside a live `strata serve`. For every event in
            position order it checks that positions have no gaps, that prev_hash is the previous
            event's hash, and that hash is SHA-256(prev_hash ‖ canonical event) over the stored columns.
            Along the way it checks every signed checkpoint: its Ed25519 signature, that the trusted
            key made it, and that the chain still has the signed hash at its position, which catches
            a chain rewritten with every hash recomputed.

            Problems: GAP, BROKEN_LINK, HASH_MISMATCH, CHECKPOINT_MISMATCH, BAD_SIGNATURE,
            UNTRUSTED_KEY, CHECKPOINT_BEYOND_HEAD. Events after the last signed position are reported
            (a running service signs them within its interval), not a failure. Without a trusted key
            each signature is checked against the key its row names, and the report says the key is
            not pinned: keep the public key (and a recent signed position and hash, for --expect)
            somewhere the store's owner cannot write.

            Exit codes: 0 the chain is intact, 1 it is broken (the position is named) or the file is
            damaged (SQLite finds it malformed), 2 usage or environment (no store, an unreadable file,
            a malformed public key).
            """)

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let format = try arguments.textOrJSON()
        let expected = try arguments.value("expect").map(parseExpectation)
        let (trustedKeys, keySource) = try trustedKeys(arguments.value("public-key"), configuration)
        let store = try openReadOnly(configuration.eventStorePath)
        let report: ChainReport
        let progress = TerminalProgress.forStandardError("verify", total: try? store.head())
        defer { progress?.finish() }
        do throws(StoreError) {
            report = try store.verify(
                trustedKeys: trustedKeys, expected: expected,
                progress: progress.map { progress in { progress.update($0) } })
            progress?.finish()
        } catch {
            throw readFailure(configuration.eventStorePath, error)
        }
        if format == "json" {
            var result: [String: JSONValue] = [
                "intact": .bool(report.isIntact), "eventsVerified": .integer(report.eventsChecked),
                "lastGoodPosition": .integer(report.lastGoodPosition), "lastGoodHash": .string(report.lastGoodHash),
                "checkpointsVerified": .integer(report.checkpointsChecked),
                "lastSignedPosition": .integer(report.lastSignedPosition),
                "lastSignedAt": report.lastSignedAt.map { .string($0) } ?? .null,
                "unsignedEvents": .integer(report.unsignedEvents),
                "publicKey": report.trustedKeys.last.map { .string($0) } ?? .null,
                "publicKeys": .array(report.trustedKeys.map { .string($0) }),
            ]
            if let problem = report.problem {
                result["problem"] = [
                    "position": .integer(problem.position), "kind": .string(problem.kind.rawValue),
                    "message": .string(problem.message),
                ]
            }
            printLine(CanonicalJSON.string(.object(result)))
            return report.isIntact ? 0 : 1
        }
        if let problem = report.problem {
            printLine("BROKEN at position \(problem.position): \(problem.kind.rawValue): \(problem.message)")
            printLine(
                "\(report.eventsChecked) events verified before it (last good position \(report.lastGoodPosition)).")
        } else {
            printLine(
                "intact: \(report.eventsChecked) events verified; head \(report.lastGoodPosition), hash \(report.lastGoodHash)"
            )
        }
        if let signedAt = report.lastSignedAt {
            printLine(
                "checkpoints: \(report.checkpointsChecked) verified; last signed position \(report.lastSignedPosition) "
                    + "(signed \(signedAt)); \(report.unsignedEvents) events after it unsigned")
        } else {
            printLine("checkpoints: 0 verified; no signed position; \(report.unsignedEvents) events unsigned")
        }
        if let key = report.trustedKeys.last {
            let earlier = report.trustedKeys.dropLast()
            printLine(
                "trusted key: \(key) (\(keySource))"
                    + (earlier.isEmpty ? "" : "; before it, in order: " + earlier.joined(separator: ", ")))
        } else {
            printLine(
                "key not pinned: each checkpoint was checked against the key it names "
                    + "(no DATA/checkpoint.pub, no --public-key)")
        }
        if let expected, report.isIntact {
            printLine("expected hash at position \(expected.position): matches")
        }
        return report.isIntact ? 0 : 1
    }

    /// The keys checkpoints must be signed with, and where they came from: --public-key, else
    /// DATA/checkpoint.pub when present, else none (not pinned).
    static func trustedKeys(_ argument: String?, _ configuration: Configuration) throws
        -> (TrustedCheckpointKeys?, String)
    {
        if let argument { return (try CheckpointKeyFile.trustedKeys(argument), "--public-key") }
        let path = CheckpointKeyFile.publicKeyPath(configuration)
        guard FileManager.default.fileExists(atPath: path) else { return (nil, "") }
        return (try CheckpointKeyFile.readTrustedKeys(path), path)
    }

    /// `P:HASH`: a position ≥ 1 and 64 hex characters.
    static func parseExpectation(_ text: String) throws -> ExpectedHash {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let position = Int64(parts[0]), position >= 1, parts[1].utf8.count == 64,
            let hash = Hex.decode(String(parts[1]))
        else {
            throw UsageError("--expect must be POSITION:HASH (a position ≥ 1 and 64 hex characters), got '\(text)'")
        }
        return ExpectedHash(position: position, hash: Hex.encode(hash))
    }

    /// Opens the store read-only, turning "no such store" into an environment error and a
    /// damaged file into a problem found (exit 1), like a broken chain.
    static func openReadOnly(_ path: String) throws -> SQLiteEventStore {
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandFailure.environment("no event store at \(path) (set --data or STRATA_DATA)")
        }
        do {
            return try SQLiteEventStore(readingAt: path)
        } catch where error.kind == .corrupt {
            throw CommandFailure.problem(error.message)
        } catch {
            throw CommandFailure.environment("cannot open \(path): \(error.message)")
        }
    }

    /// A read of an open store that failed: a damaged page is a problem found (exit 1), anything
    /// else of the environment (exit 2).
    static func readFailure(_ path: String, _ error: StoreError) -> CommandFailure {
        guard error.kind == .corrupt else { return CommandFailure.environment("cannot read \(path): \(error)") }
        return CommandFailure.problem("\(path) is damaged: \(error.message); restore it from a backup")
    }
}
