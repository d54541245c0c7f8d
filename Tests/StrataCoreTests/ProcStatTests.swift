import StrataCore
import Testing

@Suite("ProcStat")
struct ProcStatTests {
    @Test func fieldsAreCountedFromTheNamesLastParenthesis() throws {
        // A thread's name may hold spaces and parentheses; utime is field 14, nice field 19.
        let line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194368 613 0 0 0 37 5 0 0 20 -3 9 0 6470585\n"
        let stat = try #require(ProcStat(Array(line.utf8)))
        #expect(stat.name == "a (b) c")
        #expect(stat.integer(4) == 1)
        #expect(stat.integer(14) == 37)
        #expect(stat.integer(19) == -3)
        #expect(stat.integer(22) == 6_470_585)
        #expect(stat.integer(23) == nil)
        #expect(stat.integer(3) == nil)  // the state, a letter
        #expect(stat.integer(1) == nil)
        #expect(ProcStat(Array("4242 (cut".utf8)) == nil)
    }
}
