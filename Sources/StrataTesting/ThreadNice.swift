import Foundation
import StrataCore

/// Threads' nice values as the kernel reports them, for tests of thread priorities.
public enum ThreadNice {
    /// The nice value in a `stat` file of /proc (`/proc/thread-self/stat`,
    /// `/proc/PID/task/TID/stat`): its field 19.
    public static func read(statPath: String) -> Int? {
        guard let stat = FileManager.default.contents(atPath: statPath).flatMap({ ProcStat(Array($0)) }),
            let nice = stat.integer(19)
        else { return nil }
        return Int(nice)
    }

    /// Each thread of process `pid` by the name the kernel holds, with its nice value.
    public static func threads(of pid: Int32) -> [String: Int] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var threads: [String: Int] = [:]
        for task in tasks {
            guard let comm = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8),
                let nice = read(statPath: "/proc/\(pid)/task/\(task)/stat")
            else { continue }
            threads[comm.trimmingCharacters(in: .newlines)] = nice
        }
        return threads
    }
}
