import Events
import StrataCore

/// Seals personal data where events are made: in the command service's writer, and in
/// `admin bootstrap`. One AEAD per personal field, with the subject's key from a bounded
/// cache, so the hot path touches the key store only for a subject it has not seen lately.
///
/// A subject's key is made on its first personal field and held as new until
/// `storeNewKeys` commits it, which the writer calls before it appends the batch: the key is
/// durable before any event sealed under it. A batch that fails drops its new keys
/// (`discardNewKeys`) along with its events.
///
/// Not thread-safe: it belongs to the one thread that writes events.
public final class PersonalDataSealer {
    public let store: SubjectKeyStore
    /// The keyed digest the writer keeps emails as, for uniqueness, instead of the emails.
    public let emailDigest: EmailDigest
    /// Opens through the same store, for what the writer must read back (emails, at start).
    public let opener: PersonalDataOpener
    private let capacity: Int
    private var keys: [DataSubject: SubjectKey] = [:]
    private var newKeys: [DataSubject: SubjectKey] = [:]

    public init(store: SubjectKeyStore, cacheCapacity: Int = 10_000) throws(SubjectKeyStoreError) {
        self.store = store
        self.capacity = cacheCapacity
        opener = PersonalDataOpener(store: store)
        emailDigest = EmailDigest(secret: try store.serviceSecret(named: EmailDigest.secretName))
    }

    /// `event`, appended to `stream`, with every personal field sealed under its subject's key.
    public func seal(_ event: StrataEvent, stream: String) throws(SubjectKeyStoreError) -> StrataEvent {
        guard let subject = event.personalDataSubject else { return event }
        var key: SubjectKey?
        return try event.mappingPersonalData { value throws(SubjectKeyStoreError) in
            let subjectKey: SubjectKey
            if let known = key { subjectKey = known } else { subjectKey = try self.key(for: subject) }
            key = subjectKey
            return PersonalDataCipher.seal(value.value, key: subjectKey, stream: stream)
        }
    }

    /// Whether keys were made since the last `storeNewKeys`.
    public var hasNewKeys: Bool { !newKeys.isEmpty }

    /// Commits the keys made since the last call, in one durable transaction.
    public func storeNewKeys(at time: Timestamp) throws(SubjectKeyStoreError) {
        guard !newKeys.isEmpty else { return }
        try store.insert(newKeys.values.sorted { $0.subject < $1.subject }, at: time.description)
        if keys.count + newKeys.count > capacity { keys = [:] }
        keys.merge(newKeys) { _, new in new }
        newKeys = [:]
    }

    /// Forgets the keys made since the last `storeNewKeys`: their events were not written.
    public func discardNewKeys() {
        newKeys = [:]
    }

    /// Destroys `subject`'s key (after its `PersonalDataErased` is committed). Returns
    /// whether it had one.
    @discardableResult
    public func destroyKey(of subject: DataSubject) throws(SubjectKeyStoreError) -> Bool {
        keys[subject] = nil
        newKeys[subject] = nil
        opener.forget(subject)
        return try store.destroyKey(of: subject)
    }

    /// Whether the key store's WAL may still hold a destroyed key (`SubjectKeyStore.owesTruncation`).
    public var owesTruncation: Bool { store.owesTruncation }

    /// Truncates the key store's WAL if it owes it, without waiting for readers; returns
    /// whether none is owed now.
    public func finishTruncation() throws(SubjectKeyStoreError) -> Bool {
        try store.finishTruncation()
    }

    private func key(for subject: DataSubject) throws(SubjectKeyStoreError) -> SubjectKey {
        if let key = newKeys[subject] ?? keys[subject] { return key }
        if let stored = try store.key(of: subject) {
            if keys.count >= capacity { keys = [:] }
            keys[subject] = stored
            return stored
        }
        let made = SubjectKey.generate(for: subject)
        newKeys[subject] = made
        return made
    }
}
