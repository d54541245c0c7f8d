import Bus
import CSystem
import StrataCore

/// What the commands endpoint's replies hold in libzmq for clients that do not read them, and
/// what the commands thread does about it.
///
/// libzmq keeps up to 100,000 replies for each connection (the ROUTER's high-water mark, room
/// for a pipelined client's whole burst), and nothing bounds them across connections. A peer
/// needs no key to be answered: one that sends unsigned requests and reads nothing had every
/// refusal kept for it, about 600 bytes of memory each, and a few such connections grew the
/// service by hundreds of MiB. Every reply is counted while libzmq holds it (`HeldBytes`), and
/// while `refusalBudget` bytes are held, a request refused at the gate is counted and not
/// answered. A reply the writer decided is always sent: it needs a valid signature, and a
/// client waits for it.
///
/// glibc keeps the freed replies' memory in its heaps (`AllocatorTuning` asks it to keep up to
/// 64 MiB a heap, and a live block in a heap pins what lies below it), so once what was held
/// is let go, the memory is handed back to the kernel (`malloc_trim`), once per such episode.
struct CommandReplyHold {
    /// Reply bytes held for all connections together past which gate refusals go unanswered:
    /// about 40 MiB of memory with libzmq's own cost of each message.
    static let refusalBudget = 16 << 20
    /// Held bytes past which the memory is handed back once they fall under `releasedBelow`.
    static let trimAfter = 4 << 20
    static let releasedBelow = 1 << 20
    /// How often the log hears of unanswered refusals at most.
    static let logInterval: Duration = .seconds(60)

    let held = HeldBytes()
    private var trimDue = false
    private var unanswered = 0
    private var lastLine: ContinuousClock.Instant?

    /// Whether a request refused at the gate is to go unanswered now; counts it when so.
    mutating func leavesRefusalUnanswered() -> Bool {
        guard held.bytes >= Self.refusalBudget else { return false }
        unanswered += 1
        return true
    }

    /// Once a turn of the commands thread: hands memory back when what was held is let go, and
    /// returns the line to log about unanswered refusals, if one is due (the first at once, then
    /// at most one every `logInterval`).
    mutating func turn(at now: ContinuousClock.Instant) -> String? {
        let bytes = held.bytes
        if bytes >= Self.trimAfter {
            trimDue = true
        } else if trimDue && bytes < Self.releasedBelow {
            trimDue = false
            _ = malloc_trim(0)
        }
        guard unanswered > 0 else { return nil }
        if let lastLine, now - lastLine < Self.logInterval { return nil }
        defer {
            unanswered = 0
            lastLine = now
        }
        return "commands: \(unanswered) requests refused at the gate were not answered: "
            + "\(MetricSet.number(Double(bytes) / 1_048_576)) MiB of replies wait for clients that do not read them"
    }
}
