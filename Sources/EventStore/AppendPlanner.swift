import Events
import StrataCore

/// The primitive operations an append needs from storage, inside one transaction.
/// The SQLite store and the in-memory twin both implement it, so the rules of
/// appending (journal, expected versions, positions, the chain) are written once.
package protocol AppendBackend {
    func journalEntry(commandId: String) throws(StoreError) -> JournalEntry?
    func currentVersion(of stream: String) throws(StoreError) -> Int64
    mutating func insert(_ event: RecordedEvent) throws(StoreError)
    /// Journals `entry` unless its command id is journaled already; false when it was,
    /// leaving the earlier entry as it is.
    mutating func insertIfNew(_ entry: JournalEntry) throws(StoreError) -> Bool
}

/// The end of the chain: the last position and its hash.
package struct ChainTip: Sendable, Equatable {
    package var position: Int64
    package var hash: [UInt8]
    package var hashHex: String

    package static let empty = ChainTip(position: 0, hash: HashChain.genesis, hashHex: HashChain.genesisHex)

    package init(position: Int64, hash: [UInt8], hashHex: String) {
        self.position = position
        self.hash = hash
        self.hashHex = hashHex
    }
}

package enum AppendPlanner {
    /// Decides and writes each command in order against `backend`, inside the caller's
    /// transaction. Returns the results, the new chain tip and the events written; when it throws, the
    /// caller rolls the transaction back and keeps its old tip. It throws nothing of its
    /// own: only what the backend throws.
    ///
    /// It works in two passes. The first decides every command (expected versions) and
    /// journals it, numbering its events and handing them to `chain` once it is journaled;
    /// the second writes the events with their hashes. Hashing is a third of an append's
    /// work and needs only the event before, so a `chain` on another thread hashes while
    /// this one decides and writes.
    ///
    /// A command is decided as if it were new and then journaled only if its id is not
    /// journaled yet: the insert's own search of the journal finds a retry, where looking the
    /// id up first searched it twice for every command. A command found journaled (rare) has
    /// what its deciding numbered taken back before it is answered from the journal.
    package static func append<Backend: AppendBackend, Chain: ChainLinking>(
        _ commands: [CommandWrite], to backend: inout Backend, tip start: ChainTip, recordedAt: String,
        chain: inout Chain
    ) throws(StoreError) -> (results: [CommandResult], tip: ChainTip, events: [RecordedEvent]) {
        var position = start.position
        var versions: [String: Int64] = [:]  // streams touched in this call
        var results: [CommandResult] = []
        results.reserveCapacity(commands.count)
        var numbered: [NumberedEvent] = []

        for command in commands {
            // What deciding this command changes, to take back if its id is journaled already.
            let numberedBefore = numbered.count
            let positionBefore = position
            let outcome: CommandOutcome
            switch command.decision {
            case .refuse(let error):
                outcome = .refused(error)
            case .append(let events, let expectations):
                if let conflict = try firstConflict(expectations, versions: &versions, backend: backend) {
                    outcome = .refused(conflict)
                } else {
                    let metadata = EventMetadata(
                        commandId: command.commandId, actor: command.actor, correlationId: command.correlationId,
                        causationId: command.commandId
                    ).canonicalBytes
                    var appended: [AppendedEvent] = []
                    appended.reserveCapacity(events.count)
                    for event in events {
                        let stream = event.stream.description
                        let version = try currentVersion(stream, versions: &versions, backend: backend) + 1
                        position += 1
                        numbered.append(
                            NumberedEvent(
                                position: position, stream: stream, version: version, type: event.type,
                                schemaVersion: event.schemaVersion, recordedAt: recordedAt, data: event.data,
                                metadata: metadata))
                        versions[stream] = version
                        appended.append(AppendedEvent(position: position, stream: stream, version: version, type: event.type))
                    }
                    outcome = .accepted(appended)
                }
            }
            let journaled = try backend.insertIfNew(
                JournalEntry(
                    commandId: command.commandId, bodyDigest: command.bodyDigest, keyId: command.keyId,
                    actor: command.actor, commandType: command.commandType, outcome: outcome, recordedAt: recordedAt,
                    head: position))
            if journaled {
                for event in numbered[numberedBefore...] { chain.submit(event) }
                results.append(.recorded(outcome))
                continue
            }
            // Each event's stream was one version lower before it: undone last to first, every
            // stream the command touched is back where the command found it.
            for event in numbered[numberedBefore...].reversed() { versions[event.stream] = event.version - 1 }
            numbered.removeSubrange(numberedBefore...)
            position = positionBefore
            guard let earlier = try backend.journalEntry(commandId: command.commandId) else {
                throw StoreError(.corrupt, "command \(command.commandId) is journaled, yet its entry cannot be found")
            }
            results.append(
                .answering(
                    bodyDigest: command.bodyDigest, legacyBodyDigest: command.legacyBodyDigest, keyId: command.keyId,
                    journaledAs: earlier))
        }

        var tip = start
        var written: [RecordedEvent] = []
        written.reserveCapacity(numbered.count)
        for (index, event) in numbered.enumerated() {
            let link = chain.link(index)
            let recorded = RecordedEvent(
                position: event.position, stream: event.stream, version: event.version, type: event.type,
                schemaVersion: event.schemaVersion, recordedAt: recordedAt, data: event.data, metadata: event.metadata,
                prevHash: tip.hashHex, hash: link.hex)
            try backend.insert(recorded)
            written.append(recorded)
            tip = ChainTip(position: event.position, hash: link.hash, hashHex: link.hex)
        }
        return (results, tip, written)
    }

    /// The first unmet expectation in stream-name order, so the answer is deterministic.
    /// Each expectation is looked at once, in the dictionary's order, keeping the unmet one
    /// whose stream comes first: sorting them took an array and its sort for every command.
    private static func firstConflict<Backend: AppendBackend>(
        _ expectations: [StreamName: ExpectedVersion], versions: inout [String: Int64], backend: Backend
    ) throws(StoreError) -> StrataError? {
        var first: (stream: StreamName, actual: Int64, wanted: Int64)?
        for (stream, expected) in expectations {
            guard case .exactly(let wanted) = expected else { continue }
            if let found = first, found.stream < stream { continue }
            let actual = try currentVersion(stream.description, versions: &versions, backend: backend)
            if actual != wanted { first = (stream, actual, wanted) }
        }
        guard let first else { return nil }
        return StrataError(
            .conflict, reason: "WRONG_EXPECTED_VERSION",
            "stream \(first.stream) is at version \(first.actual), the command expected \(first.wanted)")
    }

    private static func currentVersion<Backend: AppendBackend>(
        _ stream: String, versions: inout [String: Int64], backend: Backend
    ) throws(StoreError) -> Int64 {
        if let known = versions[stream] { return known }
        let version = try backend.currentVersion(of: stream)
        versions[stream] = version
        return version
    }
}

extension CommandOutcome {
    /// The journal's `result` column: `{"events":[…]}` or `{"error":{…}}`, canonical JSON.
    /// Accepted results are written directly in key order: every command has one.
    package var journalBytes: [UInt8] {
        switch self {
        case .accepted(let events):
            var out: [UInt8] = []
            out.reserveCapacity(16 + events.count * 80)
            // Integers and strings only: nothing here can be refused.
            try? CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
                try o.objects("events", events)
            }
            return out
        case .refused(let error):
            return CanonicalJSON.bytes(.object(["error": error.json]))
        }
    }

    package init?(journalJSON: JSONValue) {
        if let events = journalJSON["events"]?.arrayValue {
            var appended: [AppendedEvent] = []
            for e in events {
                guard let position = e["position"]?.integerValue, let stream = e["stream"]?.stringValue,
                    let version = e["version"]?.integerValue, let type = e["type"]?.stringValue
                else { return nil }
                appended.append(AppendedEvent(position: position, stream: stream, version: version, type: type))
            }
            self = .accepted(appended)
        } else if let error = journalJSON["error"].flatMap(StrataError.init(json:)) {
            self = .refused(error)
        } else {
            return nil
        }
    }
}

extension AppendedEvent: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o in
            o.integer("position", position)
            o.string("stream", stream)
            o.string("type", type)
            o.integer("version", version)
        }
    }
}
