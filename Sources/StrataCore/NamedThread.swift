import CSystem
import Foundation

/// Starts `body` on a new thread that the system knows by `name`: `top -H`, `perf`, `gdb`
/// and `/proc/PID/task/TID/comm` show it. Foundation's `Thread.name` stays inside Foundation
/// on Linux, so every long-lived thread of Strata starts here instead.
///
/// The kernel keeps the first 15 bytes of a name; a longer one is cut there, back to a whole
/// UTF-8 character.
public func startThread(named name: String, _ body: @escaping @Sendable () -> Void) {
    let systemName = threadName(name)
    let thread = Thread {
        _ = strata_name_this_thread(systemName)
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
