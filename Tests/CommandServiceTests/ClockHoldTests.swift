@testable import CommandService
import StrataCore
import StrataTesting
import Testing

/// A wall clock behind the recorded instants is said once when it starts and once when it ends;
/// a step back within a second is not.
@Suite struct ClockHoldTests {
    @Test func aClockBehindTheRecordedInstantsIsSaidOnceAndItsEndOnce() {
        var hold = ClockHold()
        let instant = Timestamp("2026-11-20T10:00:00.000Z")!
        #expect(hold.note(behind: 0, instant: instant) == nil)
        #expect(hold.note(behind: 900, instant: instant) == nil)
        let started = hold.note(behind: 3_600_000, instant: instant)
        #expect(started?.warning == true)
        #expect(started?.line.contains("3600000 ms behind the last recorded instant 2026-11-20T10:00:00.000Z") == true)
        #expect(hold.note(behind: 3_500_000, instant: instant) == nil)
        #expect(hold.note(behind: 0, instant: instant)?.warning == false)
        #expect(hold.note(behind: 0, instant: instant) == nil)
    }

    /// What the writer reports after each batch: how far its clock was behind the instant it
    /// recorded at.
    @Test func theWriterSaysHowFarItsClockWasBehind() throws {
        let clock = FixedClock(Timestamp("2026-11-20T10:00:00.000Z")!)
        let writer = try CommandWriter(store: InMemoryEventStore(clock: clock), clock: clock)
        _ = writer.process([])
        #expect(writer.clockBehindMilliseconds == 0)
        clock.set(Timestamp("2026-11-20T09:59:58.500Z")!)
        _ = writer.process([])
        #expect(writer.clockBehindMilliseconds == 1500)
        #expect(writer.lastInstant == Timestamp("2026-11-20T10:00:00.000Z")!)
        clock.set(Timestamp("2026-11-20T10:00:01.000Z")!)
        _ = writer.process([])
        #expect(writer.clockBehindMilliseconds == 0)
    }
}
