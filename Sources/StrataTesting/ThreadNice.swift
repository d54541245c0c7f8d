import Foundation

/// Threads' nice values as the kernel reports them, for tests of thread priorities.
public enum ThreadNice {
    /// The nice value in a `stat` file of /proc (`/proc/thread-self/stat`,
    /// `/proc/PID/task/TID/stat`): field 19, counted after the name in parentheses (which may
    /// itself hold spaces or parentheses), where field 3 starts.
    public static func read(statPath: String) -> Int? {
        guard let stat = try? String(contentsOfFile: statPath, encoding: .utf8),
            let afterName = stat.range(of: ")", options: .backwards)?.upperBound
        else { return nil }
        let fields = stat[afterName...].split(separator: " ")
        return fields.count > 16 ? Int(fields[16]) : nil
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
