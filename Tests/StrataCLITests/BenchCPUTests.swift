import Foundation
import StrataCore
import Synchronization
import Testing

@testable import StrataCLI

/// `BenchCPU`: what the benchmarks print about where the CPU went, read from this process's
/// own threads while they work.
@Suite("bench CPU by thread")
struct BenchCPUTests {
    @Test func statLinesAreReadFromTheLastParenthesis() {
        // A thread's name may hold spaces and parentheses; utime and stime are fields 14 and 15.
        let line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194368 613 0 0 0 37 5 0 0 20 0 9 0 6470585 3133440 390\n"
        let parsed = BenchCPU.parseStat(Array(line.utf8))
        #expect(parsed?.name == "a (b) c")
        #expect(parsed?.ticks == 42)
        #expect(BenchCPU.parseStat(Array("4242 (cut".utf8)) == nil)
        #expect(BenchCPU.parseStat(Array("4242 (short) S 1 2".utf8)) == nil)
        let schedstat = BenchCPU.parseSchedstat(Array("123456789 42 7\n".utf8))
        #expect(schedstat?.running == 123_456_789 && schedstat?.waiting == 42)
        #expect(BenchCPU.parseSchedstat(Array("\n".utf8)) == nil)
        #expect(BenchCPU.parseSchedstat(Array("123456789\n".utf8)) == nil)
    }

    /// A thread that works through the run is counted under its own name, to within a few
    /// hundredths of a second of its own clock; a thread that ends during the run counts in
    /// the process's total only; the main thread is called "main".
    @Test func threadsAreMeasuredWhileTheyWork() throws {
        let ready = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let measured = DispatchSemaphore(value: 0)
        let ownCount = Mutex(0.0)
        startThread(named: "cpu-probe") {
            ready.signal()
            go.wait()
            let start = BenchCPU.threadCPUSeconds()
            while BenchCPU.threadCPUSeconds() - start < 0.25 {}
            ownCount.withLock { $0 = BenchCPU.threadCPUSeconds() - start }
            measured.signal()
            go.wait()  // alive at the second sample
        }
        ready.wait()
        let before = BenchCPU.Sample.now()
        #expect(before.threads.values.contains { $0.name == "cpu-probe" })
        #expect(before.threads[getpid()]?.name == BenchCPU.mainName)
        go.signal()
        let ended = DispatchSemaphore(value: 0)
        startThread(named: "cpu-ended") {
            let start = BenchCPU.threadCPUSeconds()
            while BenchCPU.threadCPUSeconds() - start < 0.1 {}
            ended.signal()
        }
        measured.wait()
        ended.wait()
        for _ in 0..<500 where BenchCPU.threadCPUSeconds(of: "/proc/self/task").values.contains(where: {
            $0.name == "cpu-ended"
        }) {
            usleep(10_000)  // until the thread has ended
        }
        let after = BenchCPU.Sample.now()
        go.signal()

        let use = BenchCPU(from: before, to: after)
        let probe = try #require(use.threads["cpu-probe"], "\(use.threads)")
        let own = ownCount.withLock { $0 }
        #expect(abs(probe - own) < 0.03, "measured \(probe) s, the thread counted \(own) s")
        #expect(use.threads["cpu-ended"] == nil)
        #expect(use.process >= own + 0.1 - 0.03, "process \(use.process) s")
        #expect(use.wall >= 0.3)
    }

    @Test func percentOfACoreByThreadAndTheLineForPeople() {
        let start = ContinuousClock.now
        typealias Use = BenchCPU.ThreadUse
        let before = BenchCPU.Sample(
            at: start, process: 10,
            threads: [
                1: Use(name: "main", seconds: 1), 2: Use(name: "strata-writer", seconds: 0.5, waiting: 0.1),
                3: Use(name: "strata-chain", seconds: 0), 4: Use(name: "bench-client-0", seconds: 0, waiting: 1),
            ])
        let after = BenchCPU.Sample(
            at: start + .seconds(2), process: 13.3,
            threads: [
                1: Use(name: "main", seconds: 1), 2: Use(name: "strata-writer", seconds: 2, waiting: 0.7),
                3: Use(name: "strata-chain", seconds: 0.004, waiting: 0.005),
                4: Use(name: "bench-client-0", seconds: 9, waiting: 5), 5: Use(name: "strata-encoder", seconds: 0.3),
                6: Use(name: "ckpt-lag-0.db", seconds: 0.25, waiting: 0.1),
                7: Use(name: "ckpt-lag-1.db", seconds: 0.05, waiting: 0.06),
            ])
        var use = BenchCPU(from: before, to: after, clientSeconds: 0.2)
        // The client thread counts by its own report, never by /proc; a thread that began
        // during the run counts all its time; threads whose names differ in digits share a
        // line; under 1% goes to the rest.
        #expect(
            use.threads == [
                "main": 0, "strata-writer": 1.5, "strata-chain": 0.004, "strata-encoder": 0.3, "ckpt-lag-N.db": 0.3,
                BenchCPU.clientsName: 0.2,
            ])
        // Waiting counts the same way, but for threads alive at both samples only (not the
        // clients), and only from 1% of the wall time.
        #expect(use.waiting["strata-writer"] == 0.6 && use.waiting[BenchCPU.clientsName] == nil)
        #expect(use.waitingPercentByThread.map(\.name) == ["strata-writer", "ckpt-lag-N.db"])
        #expect(use.waitingPercentByThread.map(\.percent) == [30, 8])
        #expect(use.processPercent == 165)
        #expect(
            use.percentByThread.map(\.name) == [
                "strata-writer", "ckpt-lag-N.db", "strata-encoder", BenchCPU.clientsName, BenchCPU.otherName,
            ])
        #expect(use.percentByThread.map(\.percent) == [75, 15, 15, 10, 50])
        let cores = ProcessInfo.processInfo.activeProcessorCount
        #expect(
            use.line("lending loop")
                == "  CPU, lending loop: 1.65 of \(cores) cores — strata-writer 0.75, ckpt-lag-N.db 0.15, "
                + "strata-encoder 0.15, bench clients 0.10, other threads 0.50\n"
                + "    waiting for a core: strata-writer 0.30, ckpt-lag-N.db 0.08")
        #expect(
            use.json
                == [
                    "cores": .integer(Int64(cores)), "processPercent": 165,
                    "threadsPercent": [
                        "bench clients": 10, "ckpt-lag-N.db": 15, "other threads": 50, "strata-encoder": 15,
                        "strata-writer": 75,
                    ],
                    "threadsWaitingPercent": ["ckpt-lag-N.db": 8, "strata-writer": 30],
                ])

        // A second run adds its time and its wall clock: the account is over both.
        use.add(BenchCPU(from: before, to: after))
        #expect(use.wall == 4 && abs(use.process - 6.6) < 1e-9 && use.threads["strata-writer"] == 3)
        #expect(abs((use.waiting["strata-writer"] ?? 0) - 1.2) < 1e-9)
        #expect(use.processPercent == 165)
        #expect(use.percentByThread.map(\.percent) == [75, 15, 15, 5, 55])
        #expect(BenchCPU.role(of: "ZMQbg/IO/0") == "ZMQbg/IO/N")
        #expect(BenchCPU.role(of: "verify-hash-12") == "verify-hash-N")
        #expect(BenchCPU().line("idle") == "  CPU, idle: 0.00 of \(cores) cores")
    }
}

/// What every scenario that reports its CPU prints: checked the same way by each one's tests.
enum BenchCPUExpectations {
    /// A figure's `cpu` member: the machine's cores, the process's share, and `threads` among
    /// the threads named.
    static func check(_ cpu: JSONValue?, threads: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let cores = Int64(ProcessInfo.processInfo.activeProcessorCount)
        #expect(cpu?["cores"]?.integerValue == cores, "\(String(describing: cpu))", sourceLocation: sourceLocation)
        #expect(
            (cpu?["processPercent"]?.integerValue ?? 0) > 0, "\(String(describing: cpu))", sourceLocation: sourceLocation)
        for thread in threads {
            #expect(
                (cpu?["threadsPercent"]?[thread]?.integerValue ?? 0) > 0, "\(thread): \(String(describing: cpu))",
                sourceLocation: sourceLocation)
        }
        // Present even when nothing waited for a core (then empty).
        #expect(
            cpu?["threadsWaitingPercent"]?.objectValue != nil, "\(String(describing: cpu))",
            sourceLocation: sourceLocation)
    }

    /// A table's lines without the lines of waiting for a core, which a run prints only when
    /// some thread waited (each is checked: `waiting for a core: NAME 0.12, …`).
    static func linesWithoutWaiting(
        _ stdout: String, sourceLocation: SourceLocation = #_sourceLocation
    ) -> [Substring] {
        let prefix = "    waiting for a core: "
        let lines = stdout.split(separator: "\n", omittingEmptySubsequences: false)
        for line in lines where line.hasPrefix(prefix) {
            let entries = line.dropFirst(prefix.count).split(separator: ", ")
            let wellFormed = !entries.isEmpty && entries.allSatisfy { entry in
                entry.split(separator: " ").last.map { Double($0) != nil } ?? false
            }
            #expect(wellFormed, "\(line)", sourceLocation: sourceLocation)
        }
        return lines.filter { !$0.hasPrefix(prefix) }
    }

    /// The line a table ends with for `label`.
    static func check(line: Substring, label: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        #expect(
            line.hasPrefix("  CPU, \(label): ") && line.contains(" of \(cores) cores"), "\(line)",
            sourceLocation: sourceLocation)
    }
}
