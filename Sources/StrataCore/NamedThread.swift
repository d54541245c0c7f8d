import CSystem
import Foundation

/// Starts `body` on a new thread that the system knows by `name`: `top -H`, `perf`, `gdb`
/// and `/proc/PID/task/TID/comm` show it. Foundation's `Thread.name` stays inside Foundation
/// on Linux, so every long-lived thread of Strata starts here instead.
///
/// The kernel keeps the first 15 bytes of a name; a longer one is cut there, back to a whole
/// UTF-8 character.
public func startThread(
    named name: String, priority: ThreadPriority = .normal, _ body: @escaping @Sendable () -> Void
) {
    let systemName = threadName(name)
    let thread = Thread {
        _ = strata_name_this_thread(systemName)
        if priority == .yielding {
            // Cannot fail for want of privilege (a thread may always lower its own priority);
            // should it fail anyway, the thread runs as it would have before.
            _ = strata_lower_this_thread_priority(ThreadPriority.yieldingNice)
        }
        body()
    }
    thread.name = name
    thread.start()
}

/// `name` as the kernel will keep it: at most 15 bytes, never half a character.
func threadName(_ name: String) -> String {
    var bytes = 0
    var end = name.unicodeScalars.startIndex
    for scalar in name.unicodeScalars {
        let width = UTF8.width(scalar)
        guard bytes + width <= 15 else { break }
        bytes += width
        end = name.unicodeScalars.index(after: end)
    }
    return String(name.unicodeScalars[..<end])
}

/// How a thread competes for the cores when they are all busy.
///
/// The threads that put work in order (the command writer, a projector applying its
/// batches) and those they wait on (the chain's hashing, the events' encoding, a log's
/// checkpoint) run at the process's own priority. The threads that feed or follow them
/// (taking requests in, replying, publishing, serving history) can run a little later
/// without slowing anything down, as long as they run: at full load, time they take from
/// a writer's core is time the writer waits while its work is already queued.
public enum ThreadPriority: Sendable {
    /// The priority of the thread that starts it, as a new thread inherits it: the process's
    /// own for a thread started by a normal one (a yielding thread's threads yield too).
    case normal
    /// Nice 10 above the process's own (Linux keeps one per thread, up to 19): where such a
    /// thread and a normal one contend for a core, the scheduler gives the normal one about
    /// nine tenths of it. Never starved: with a core to spare it runs at once.
    case yielding

    static let yieldingNice: Int32 = 10
}
