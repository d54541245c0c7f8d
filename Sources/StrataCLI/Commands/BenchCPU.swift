import Foundation
import StrataCore

/// Where a benchmark run's CPU went: this process's CPU time between two samples, by thread.
///
/// A figure below its target says little on its own; beside it, how busy each thread was
/// says whether one thread is the bound (the command writer near a whole core) or the
/// machine is (the process near every core). Every long-lived thread of Strata carries its
/// name to the system (`startThread(named:)`), so the names here are the ones `top -H` and
/// `perf` show.
///
/// The process's time comes from `getrusage`, which also counts threads that ended between
/// the samples; each thread's from `/proc/self/task/TID` (`threadCPUSeconds(of:)`). A
/// benchmark's clients end before the second sample, so they report their own time
/// (`threadCPUSeconds()`).
///
/// The kernel also counts how long each thread was ready to run but waited for a core: a
/// thread that bounds the figure yet is on a core well under all the time is either waiting
/// for work or, when that count is large, for the cores the other threads hold.
struct BenchCPU: Sendable {
    /// Each thread's CPU seconds, from `/proc/self/task`, with the process's total.
    struct Sample: Sendable {
        let at: ContinuousClock.Instant
        let process: Double
        /// Keyed by thread id, since several threads may share a name.
        let threads: [Int32: ThreadUse]

        static func now() -> Sample {
            let at = ContinuousClock.now
            return Sample(at: at, process: processCPUSeconds(), threads: threadCPUSeconds(of: "/proc/self/task"))
        }
    }

    /// One thread's counts: seconds on a core, and seconds ready to run but waiting for one.
    struct ThreadUse: Sendable, Equatable {
        var name: String
        var seconds: Double
        var waiting: Double = 0
    }

    /// Wall seconds covered, summed over the runs added together.
    private(set) var wall: Double = 0
    /// CPU seconds of the whole process.
    private(set) var process: Double = 0
    /// CPU seconds by thread role (`role(of:)`), for threads alive at the run's end, and for
    /// the benchmark's clients (`clientsName`).
    private(set) var threads: [String: Double] = [:]
    /// Seconds ready to run but waiting for a core, by thread role, for threads alive at the
    /// run's end (the clients report none).
    private(set) var waiting: [String: Double] = [:]

    static let clientsName = "bench clients"
    /// How the benchmark's client threads are named (`bench-client-N`).
    static let clientPrefix = "bench-client-"
    /// What the process used outside the threads named: threads that ended during the run (a
    /// rebuild's per-page readers) and threads under 1% of a core.
    static let otherName = "other threads"

    init() {}

    /// The process's use between `start` and `end`: every thread alive at both, by name, and
    /// the clients as one more. Client threads (named with `clientPrefix`) count only by
    /// `clientSeconds`, their own count, even when one is still ending at `end`.
    init(from start: Sample, to end: Sample, clientSeconds: Double = 0) {
        wall = BenchCommand.seconds(between: start.at, and: end.at)
        process = max(0, end.process - start.process)
        for (tid, thread) in end.threads where !thread.name.hasPrefix(Self.clientPrefix) {
            // A thread missing at the start began during the run: all its time is the run's.
            let before = start.threads[tid].flatMap { $0.name == thread.name ? $0 : nil }
            let role = Self.role(of: thread.name)
            threads[role, default: 0] += max(0, thread.seconds - (before?.seconds ?? 0))
            waiting[role, default: 0] += max(0, thread.waiting - (before?.waiting ?? 0))
        }
        if clientSeconds > 0 { threads[Self.clientsName, default: 0] += clientSeconds }
    }

    /// A thread's name with each run of digits as `N`: threads of one role share a line
    /// (`ZMQbg/IO/N`, `verify-hash-N`), and so does each run's store (`ckpt-lag-N.db`).
    static func role(of name: String) -> String {
        var role = ""
        var inDigits = false
        for character in name {
            if character.isASCII, character.isNumber {
                if !inDigits { role.append("N") }
                inDigits = true
            } else {
                role.append(character)
                inDigits = false
            }
        }
        return role
    }

    /// What the benchmark's clients used, by their own count.
    var clientSeconds: Double { threads[Self.clientsName] ?? 0 }

    /// Adds another run's use, so that a figure over several runs has one account.
    mutating func add(_ other: BenchCPU) {
        wall += other.wall
        process += other.process
        for (name, seconds) in other.threads { threads[name, default: 0] += seconds }
        for (name, seconds) in other.waiting { waiting[name, default: 0] += seconds }
    }

    /// Percent of one core, thread by thread, largest first; threads under 1% and the time
    /// of threads not named go to `otherName`.
    var percentByThread: [(name: String, percent: Int64)] {
        guard wall > 0 else { return [] }
        var named: [(name: String, percent: Int64)] = []
        var accounted = 0.0
        for (name, seconds) in threads {
            let percent = Int64((seconds / wall * 100).rounded())
            guard percent >= 1 else { continue }
            named.append((name, percent))
            accounted += seconds
        }
        named.sort { $0.percent != $1.percent ? $0.percent > $1.percent : $0.name < $1.name }
        let rest = Int64(((process - accounted) / wall * 100).rounded())
        if rest >= 1 { named.append((Self.otherName, rest)) }
        return named
    }

    /// Percent of the wall time each thread waited for a core, largest first, 1% or more.
    var waitingPercentByThread: [(name: String, percent: Int64)] {
        guard wall > 0 else { return [] }
        return
            waiting
            .map { (name: $0.key, percent: Int64(($0.value / wall * 100).rounded())) }
            .filter { $0.percent >= 1 }
            .sorted { $0.percent != $1.percent ? $0.percent > $1.percent : $0.name < $1.name }
    }

    /// The whole process, in percent of one core.
    var processPercent: Int64 { wall > 0 ? Int64((process / wall * 100).rounded()) : 0 }

    /// `{"cores":N,"processPercent":P,"threadsPercent":{name:P,…},"threadsWaitingPercent":{…}}`,
    /// percent of one core (of the wall time, for the waiting).
    var json: JSONValue {
        var byThread: [String: JSONValue] = [:]
        for (name, percent) in percentByThread { byThread[name] = .integer(percent) }
        var waitingByThread: [String: JSONValue] = [:]
        for (name, percent) in waitingPercentByThread { waitingByThread[name] = .integer(percent) }
        return [
            "cores": .integer(Int64(ProcessInfo.processInfo.activeProcessorCount)),
            "processPercent": .integer(processPercent), "threadsPercent": .object(byThread),
            "threadsWaitingPercent": .object(waitingByThread),
        ]
    }

    /// Lines for people: `CPU, LABEL: 1.52 of 2 cores — strata-writer 0.95, …`, then, when any
    /// thread waited for a core, `waiting for a core: strata-writer 0.20, …`.
    func line(_ label: String) -> String {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let threads = percentByThread.map { "\($0.name) \(Self.cores($0.percent))" }
        let waits = waitingPercentByThread.map { "\($0.name) \(Self.cores($0.percent))" }
        return "  CPU, \(label): \(Self.cores(processPercent)) of \(cores) cores"
            + (threads.isEmpty ? "" : " — " + threads.joined(separator: ", "))
            + (waits.isEmpty ? "" : "\n    waiting for a core: " + waits.joined(separator: ", "))
    }

    private static func cores(_ percent: Int64) -> String {
        String(format: "%.2f", Double(percent) / 100)
    }

    // MARK: - Reading the counts

    /// The calling thread's own CPU time, exact (`CLOCK_THREAD_CPUTIME_ID`).
    static func threadCPUSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// User and system time of the whole process, ended threads included.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// Each thread under `directory` (`/proc/self/task`) by id: its name, CPU seconds and
    /// seconds waiting for a CPU. The times are `schedstat`'s first two fields, nanoseconds on
    /// a CPU and runnable on a run queue; where the kernel keeps no `schedstat`, `stat`'s user
    /// and system ticks, and no waiting. The main thread, whose name is the program's, is
    /// called `mainName`. A thread that ends while it is read is left out.
    static func threadCPUSeconds(of directory: String) -> [Int32: ThreadUse] {
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        let main = getpid()
        var threads: [Int32: ThreadUse] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            guard let tid = Int32(entry),
                let stat = FileManager.default.contents(atPath: "\(directory)/\(entry)/stat"),
                let parsed = parseStat(Array(stat))
            else { continue }
            let name = tid == main ? mainName : parsed.name
            var thread = ThreadUse(name: name, seconds: Double(parsed.ticks) / ticksPerSecond)
            if let schedstat = FileManager.default.contents(atPath: "\(directory)/\(entry)/schedstat")
                .flatMap({ parseSchedstat(Array($0)) })
            {
                thread.seconds = Double(schedstat.running) / 1e9
                thread.waiting = Double(schedstat.waiting) / 1e9
            }
            threads[tid] = thread
        }
        return threads
    }

    static let mainName = "main"

    /// The nanoseconds on a CPU and waiting for one from a `schedstat` line:
    /// `RUN_NS WAIT_NS SLICES`.
    static func parseSchedstat(_ line: [UInt8]) -> (running: Int64, waiting: Int64)? {
        let fields = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
        guard fields.count >= 2,
            let running = Int64(String(decoding: fields[0], as: UTF8.self)),
            let waiting = Int64(String(decoding: fields[1], as: UTF8.self))
        else { return nil }
        return (running, waiting)
    }

    /// The name and user + system ticks (utime and stime, the 14th and 15th fields) from a
    /// `stat` line.
    static func parseStat(_ line: [UInt8]) -> (name: String, ticks: Int64)? {
        guard let stat = ProcStat(line), let user = stat.integer(14), let system = stat.integer(15) else { return nil }
        return (stat.name, user + system)
    }
}
