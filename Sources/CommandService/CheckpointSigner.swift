import Dispatch
import EventStore
import Foundation
import StrataCore

/// Signs the chain's head with the service's Ed25519 key: at intervals while the head
/// advances, and once more at a graceful stop. It runs on the writer's thread, which owns
/// the store, between batches; a signature and its one-row commit take well under a
/// millisecond of that thread's time plus one fsync.
final class CheckpointSigner {
    private let store: SQLiteEventStore
    private let key: CheckpointKey
    /// Zero: sign only at the stop.
    private let interval: TimeInterval
    private let clock: any WallClock
    private let logger: Logger
    private var signedPosition: Int64
    private var nextDue: DispatchTime

    init(
        store: SQLiteEventStore, key: CheckpointKey, interval: TimeInterval, clock: any WallClock, logger: Logger,
        signedPosition: Int64
    ) {
        self.store = store
        self.key = key
        self.interval = interval
        self.clock = clock
        self.logger = logger
        self.signedPosition = signedPosition
        self.nextDue = DispatchTime.now() + interval
    }

    /// Signs `head` when it advanced since the last signature and the interval has passed.
    func tick(head: Int64) {
        guard interval > 0, head > signedPosition, DispatchTime.now() >= nextDue else { return }
        sign(head)
        nextDue = DispatchTime.now() + interval
    }

    /// The graceful stop: signs the final head if it advanced.
    func finish(head: Int64) {
        guard head > signedPosition else { return }
        sign(head)
    }

    /// A failure is logged and the next turn tries again: the events are committed either
    /// way, and a checkpoint only adds evidence about them.
    private func sign(_ head: Int64) {
        do throws(StoreError) {
            guard let hash = try store.hash(at: head) else {
                logger.error("cannot sign a checkpoint at \(head): the store has no event there")
                return
            }
            try store.appendCheckpoint(key.sign(position: head, hash: hash, signedAt: clock.now().description))
            signedPosition = head
            logger.debug("signed checkpoint position=\(head) hash=\(hash)")
        } catch {
            logger.error("cannot record a signed checkpoint at \(head): \(error.message)")
        }
    }

    /// Refuses a store whose chain no longer matches its last signed checkpoint (or lost the
    /// events it names): signing on from there would certify a rewritten history. Returns the
    /// last checkpoint, if there is one.
    static func checkStart(_ store: SQLiteEventStore, head: Int64) throws(ServerError) -> SignedCheckpoint? {
        let found: SignedCheckpoint?
        var stored: String?
        do throws(StoreError) {
            found = try store.lastCheckpoint()
            if let found { stored = try store.hash(at: found.position) }
        } catch {
            throw ServerError(.environment, "cannot read the signed checkpoints: \(error.message)")
        }
        guard let last = found else { return nil }
        let advice = "run `strata verify` to find where"
        guard last.hasValidSignature else {
            throw ServerError(
                .integrity, "the signed checkpoint at \(last.position) does not verify under its key; \(advice)")
        }
        guard last.position <= head else {
            throw ServerError(
                .integrity,
                "the signed checkpoint at \(last.position) lies beyond the head \(head): events were removed; "
                    + advice)
        }
        guard stored == last.hash else {
            throw ServerError(
                .integrity,
                "the chain no longer matches the signed checkpoint at \(last.position) (signed \(last.hash), "
                    + "stored \(stored ?? "nothing")); \(advice)")
        }
        try checkTail(store, after: last, head: head)
        return last
    }

    /// The events after the last checkpoint are the next to be signed: they must chain from
    /// it, or the service would certify whatever was changed in them while it was down.
    /// After a graceful stop there are none; after a crash, at most an interval's worth.
    private static func checkTail(_ store: SQLiteEventStore, after last: SignedCheckpoint, head: Int64)
        throws(ServerError)
    {
        guard var verifier = ChainVerifier(after: last.position, hash: last.hash) else {
            throw ServerError(.integrity, "the signed checkpoint at \(last.position) has a malformed hash")
        }
        do throws(StoreError) {
            while verifier.lastPosition < head, verifier.problem == nil {
                let page = try store.events(after: verifier.lastPosition, limit: 2000)
                if page.isEmpty { break }
                for event in page where !verifier.check(event) { break }
            }
        } catch {
            throw ServerError(.environment, "cannot read the events after the last checkpoint: \(error.message)")
        }
        if let problem = verifier.problem {
            throw ServerError(
                .integrity,
                "the events after the signed checkpoint at \(last.position) do not chain from it: \(problem); "
                    + "run `strata verify`")
        }
    }
}
