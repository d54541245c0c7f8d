import Events
import Synchronization

/// Opens sealed personal data through the key store: what projectors, `rebuild`,
/// `query --as-of`, `report` and the history endpoint (for keys with the `personal-data`
/// scope) all use, so every reader opens the same way and a rebuild equals the live file.
///
/// A value whose key is gone reads as `[erased]`; a value whose key exists but does not open
/// it (altered bytes, a value copied from another stream) is an error, never guessed at. A
/// key store that is missing or cannot be read is an error of its own kind (`.keyStore`): it
/// says nothing about the value.
/// The key store is opened read-only on first need, so a reader of a store with nothing
/// sealed needs none. Secrets are cached (bounded), and so is the absence of a key: a key
/// is committed before the first event sealed under it, so once absent it stays absent.
public final class PersonalDataOpener: PersonalDataOpening {
    private struct State: ~Copyable {
        var store: SubjectKeyStore?
        var secrets: [String: [UInt8]?] = [:]
    }

    public let keyStorePath: String
    private let capacity: Int
    private let state: Mutex<State>

    /// An opener that reads the key store at `keyStorePath` when it first needs a key. With
    /// `cacheCapacity` 0 it caches nothing and reads the store for every value: for a
    /// reader that never learns of erasures (the history endpoint).
    public init(keyStorePath: String, cacheCapacity: Int = 10_000) {
        self.keyStorePath = keyStorePath
        self.capacity = cacheCapacity
        state = Mutex(State(store: nil))
    }

    /// An opener over a key store already open (the command service's own).
    public init(store: SubjectKeyStore, cacheCapacity: Int = 10_000) {
        self.keyStorePath = store.path
        self.capacity = cacheCapacity
        state = Mutex(State(store: store))
    }

    public func open(_ sealed: PersonalData, stream: String) throws(PersonalDataError) -> PersonalData {
        guard let (keyId, box) = PersonalDataCipher.parse(sealed) else {
            throw PersonalDataError("a value in \(stream) starts like a sealed value but is not one")
        }
        guard let secret = try secret(ofKey: String(keyId)) else { return .erased }
        guard let clear = PersonalDataCipher.open(box: box, keyId: keyId, secret: secret, stream: stream) else {
            throw PersonalDataError(
                "a sealed value in \(stream) does not open with key \(keyId): altered, or copied from another stream")
        }
        return PersonalData(clear)
    }

    /// Drops what is cached of `subject`'s key, once its erasure is seen.
    public func forget(_ subject: DataSubject) {
        let prefix = subject.description + ":"
        state.withLock { state in
            for keyId in state.secrets.keys where keyId.hasPrefix(prefix) { state.secrets[keyId] = nil }
        }
    }

    private func secret(ofKey keyId: String) throws(PersonalDataError) -> [UInt8]? {
        let path = keyStorePath
        let capacity = capacity
        let found: Result<[UInt8]?, PersonalDataError> = state.withLock { state in
            if let cached = state.secrets[keyId] { return .success(cached) }
            do throws(SubjectKeyStoreError) {
                let store: SubjectKeyStore
                if let open = state.store { store = open } else { store = try SubjectKeyStore(readingAt: path) }
                state.store = store
                let secret = try store.secret(ofKey: keyId)
                guard capacity > 0 else { return .success(secret) }
                if state.secrets.count >= capacity { state.secrets = [:] }
                state.secrets[keyId] = .some(secret)
                return .success(secret)
            } catch {
                return .failure(PersonalDataError("cannot open personal data: \(error)", kind: .keyStore))
            }
        }
        return try found.get()
    }
}
