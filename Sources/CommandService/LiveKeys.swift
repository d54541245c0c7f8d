import Bus
import Events
import StrataCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where `serve` reads its key file again once it changes: the file to watch, and how to read it,
/// with the checks of the start (only its owner may read it, strict parsing, the service's copy).
public struct KeyFileSource: Sendable {
    public let path: String
    public let read: @Sendable () throws -> KeyFile

    public init(path: String, read: @escaping @Sendable () throws -> KeyFile) {
        self.path = path
        self.read = read
    }
}

/// The keys in force, which follow the key file while the service runs: a key added with
/// `strata keys new` is admitted, and a key taken out of the file refused, within about a
/// second, without a restart that would drop every connection. A compromised key is revoked
/// where it matters, at the gates of both endpoints and the CURVE allow-list.
///
/// The commands thread looks at the file's identity (device, inode, size, times) once a second;
/// when it changed, it reads the file whole and puts it in force only if it is sound in every
/// respect a start would check, and keeps the service's own CURVE pair: that pair is bound into
/// the sockets, so a file that changes it, or turns CURVE on or off, waits for a restart. A file
/// that is not put in force leaves the keys as they were, and says why in the log, once.
/// The gates follow `generation`, each on its own thread; the ZAP handler asks at each handshake.
final class LiveKeys: Sendable {
    /// One whole key file and what the service works out of it.
    struct InForce: Sendable {
        let keys: KeyFile
        let roles: [String: Set<Role>]
        /// The client public keys the ZAP handler admits on the request endpoints (every key's),
        /// each with its key's id.
        let allowList: [CurveKey: String]
        /// Those it admits on the events endpoint: keys with the `history` scope.
        let eventsAllowList: [CurveKey: String]
        let curve: CurveKeyPair?

        init(_ keys: KeyFile) throws(ServerError) {
            self.keys = keys
            roles = try CommandServer.roles(of: keys)
            allowList = CommandServer.curveAllowList(keys)
            eventsAllowList = CommandServer.curveAllowList(keys, scope: .history)
            curve = try CommandServer.curveServerPair(keys)
        }
    }

    /// What identifies one version of the file on disk.
    private struct Stamp: Equatable {
        var device: UInt64, inode: UInt64, size: Int64
        var modified: timespec, changed: timespec

        static func == (a: Stamp, b: Stamp) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
                && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
        }

        /// The file's stamp (a symbolic link followed: a mounted secret is swapped by its link);
        /// nil when it cannot be read.
        init?(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = info.st_mtim
            changed = info.st_ctim
        }
    }

    private struct Watch {
        /// The file's stamp when it was last read (or found unreadable): nil, it was not there.
        var stamp: Stamp?
        var nextLook: ContinuousClock.Instant
    }

    private let inForce: Mutex<InForce>
    private let counter = Atomic<Int>(0)
    private let source: KeyFileSource?
    private let watch: Mutex<Watch>
    private let logger: Logger

    /// `keys` as read at start, from `source` when the service should follow the file.
    init(_ keys: KeyFile, source: KeyFileSource?, logger: Logger) throws(ServerError) {
        inForce = Mutex(try InForce(keys))
        self.source = source
        self.logger = logger
        // Stamped now, after the start read it: a change in between is seen as one at the first look.
        watch = Mutex(Watch(stamp: source.flatMap { Stamp($0.path) }, nextLook: .now + .seconds(1)))
    }

    /// Counts the key files put in force; a gate whose count differs takes `current` again.
    var generation: Int { counter.load(ordering: .acquiring) }

    var current: InForce { inForce.withLock { $0 } }

    /// Looks at the file if a second has passed since the last look, and puts it in force if it
    /// changed and is sound. Called by one thread, between requests.
    func follow() {
        guard let source else { return }
        let now = ContinuousClock.now
        let changed = watch.withLock { watch in
            guard now >= watch.nextLook else { return false }
            watch.nextLook = now + .seconds(1)
            let stamp = Stamp(source.path)
            guard stamp != watch.stamp else { return false }
            watch.stamp = stamp
            return true
        }
        guard changed else { return }
        let before = current
        let next: InForce
        do {
            next = try InForce(try source.read())
        } catch {
            logger.error(
                "the key file \(source.path) changed and was not read: \(error); "
                    + "the \(String.counted(before.keys.keys.count, "key")) read before stay in force")
            return
        }
        guard next.curve == before.curve else {
            logger.error(
                "the key file \(source.path) changed the service's own CURVE pair, which takes effect when serve "
                    + "restarts; the \(String.counted(before.keys.keys.count, "key")) read before stay in force")
            return
        }
        inForce.withLock { $0 = next }
        counter.add(1, ordering: .releasing)
        logger.info("read the key file \(source.path) again: \(Self.changes(from: before.keys, to: next.keys))")
    }

    /// `3 keys; added a; removed b; changed c`: what a reader of the log needs to see that a
    /// revocation took.
    static func changes(from old: KeyFile, to new: KeyFile) -> String {
        let oldKeys = Dictionary(old.keys.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let newKeys = Dictionary(new.keys.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var parts = [String.counted(new.keys.count, "key")]
        let added = newKeys.keys.filter { oldKeys[$0] == nil }.sorted()
        let removed = oldKeys.keys.filter { newKeys[$0] == nil }.sorted()
        let changed = newKeys.filter { id, key in oldKeys[id].map { $0 != key } ?? false }.keys.sorted()
        if !added.isEmpty { parts.append("added " + added.joined(separator: ", ")) }
        if !removed.isEmpty { parts.append("removed " + removed.joined(separator: ", ")) }
        if !changed.isEmpty { parts.append("changed " + changed.joined(separator: ", ")) }
        if parts.count == 1 { parts.append("no key added, removed or changed") }
        return parts.joined(separator: "; ")
    }
}

/// One thread's gate over the keys in force, made again when they change.
struct FollowingGate {
    /// The keys it follows; the commands thread also has them look at the file (`follow`).
    let keys: LiveKeys
    private let scope: KeyFile.Scope
    private let maximumBodyBytes: Int
    private var generation: Int
    private(set) var gate: RequestGate
    /// Each key's permitted actor roles, from the same key file as `gate`.
    private(set) var roles: [String: Set<Role>]

    init(_ keys: LiveKeys, scope: KeyFile.Scope, maximumBodyBytes: Int) {
        self.keys = keys
        self.scope = scope
        self.maximumBodyBytes = maximumBodyBytes
        generation = keys.generation
        let inForce = keys.current
        gate = RequestGate(keys: inForce.keys, scope: scope, maximumBodyBytes: maximumBodyBytes)
        roles = inForce.roles
    }

    /// Takes the keys in force again if they changed since. Called between requests.
    mutating func refresh() {
        let latest = keys.generation
        guard latest != generation else { return }
        // Read after the count: a file put in force in between is taken now and again next time.
        let inForce = keys.current
        gate = RequestGate(keys: inForce.keys, scope: scope, maximumBodyBytes: maximumBodyBytes)
        roles = inForce.roles
        generation = latest
    }
}
