import Dispatch
import Foundation
import Synchronization
import Testing

import StrataCore
import StrataTesting

@Suite("Named threads")
struct NamedThreadTests {
    /// The name the kernel holds for a thread started with `name`, as `top -H` and `perf` read it.
    private func systemName(of name: String) throws -> String {
        let seen = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        startThread(named: name) {
            let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
            seen.withLock { $0 = comm }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        let comm = try #require(seen.withLock { $0 })
        return comm.hasSuffix("\n") ? String(comm.dropLast()) : comm
    }

    @Test func theSystemKnowsAThreadByItsName() throws {
        #expect(try systemName(of: "strata-writer") == "strata-writer")
        #expect(try systemName(of: "a") == "a")
    }

    /// The kernel keeps 15 bytes; a longer name is cut there, and never inside a character.
    @Test func aLongNameIsCutToFifteenBytesOfWholeCharacters() throws {
        #expect(try systemName(of: "projector-readmodels") == "projector-readm")
        #expect(try systemName(of: "123456789012345") == "123456789012345")
        // "é" is two bytes: a third one would end at the 16th.
        #expect(try systemName(of: "projector-ééé") == "projector-éé")
        #expect(try systemName(of: "1234567890123é") == "1234567890123é")
        #expect(try systemName(of: "12345678901234é") == "12345678901234")
    }

    /// The nice value of a thread started with `priority`, read on that thread.
    private func niceOfThread(started priority: ThreadPriority) throws -> Int {
        let seen = Mutex<Int?>(nil)
        let done = DispatchSemaphore(value: 0)
        startThread(named: "nice-probe", priority: priority) {
            seen.withLock { $0 = ThreadNice.read(statPath: "/proc/thread-self/stat") }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        return try #require(seen.withLock { $0 })
    }

    /// A yielding thread gives way to the others: nice 10 above the thread that started it
    /// (up to 19, the lowest priority); a normal thread keeps the starter's.
    @Test func aYieldingThreadRunsTenNiceLevelsBelowItsStarter() throws {
        let starter = try #require(ThreadNice.read(statPath: "/proc/thread-self/stat"))
        #expect(try niceOfThread(started: .normal) == starter)
        #expect(try niceOfThread(started: .yielding) == min(starter + 10, 19))
    }
}
