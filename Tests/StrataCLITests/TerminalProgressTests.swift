import Foundation
import Testing

@testable import StrataCLI

@Suite("Terminal progress line")
struct TerminalProgressTests {
    @Test(arguments: [
        (250_000, 1_000_000, 0.5, "replay: 250000/1000000 events (25%), 500000 events/s, ETA 2s"),
        (1000, 1_000_000, 1.0, "replay: 1000/1000000 events (0%), 1000 events/s, ETA 16m39s"),
        (1, 10_000, 1.0, "replay: 1/10000 events (0%), 1 events/s, ETA 2h46m"),
        (10, 10, 0.25, "replay: 10/10 events (100%), 40 events/s, ETA 0s"),
        (12, 10, 1.0, "replay: 12/10 events (100%), 12 events/s, ETA 0s"),
        (0, 10, 0.0, "replay: 0/10 events (0%), 0 events/s, ETA ?"),
        (0, 10, 2.0, "replay: 0/10 events (0%), 0 events/s, ETA ?"),
    ] as [(Int64, Int64, Double, String)])
    func withATotal(_ done: Int64, _ total: Int64, _ seconds: Double, _ expected: String) {
        #expect(TerminalProgress.line("replay", done: done, total: total, seconds: seconds) == expected)
    }

    @Test func withoutATotal() {
        let some = TerminalProgress.line("replay", done: 1234, total: nil, seconds: 2)
        #expect(some == "replay: 1234 events, 617 events/s")
        let empty = TerminalProgress.line("rebuild audit", done: 0, total: nil, seconds: 0)
        #expect(empty == "rebuild audit: 0 events, 0 events/s")
        // A total of 0 says nothing about what is left.
        #expect(TerminalProgress.line("replay", done: 3, total: 0, seconds: 1) == "replay: 3 events, 3 events/s")
    }

    @Test(arguments: [
        (0.0, "0s"), (0.2, "1s"), (59.0, "59s"), (59.2, "1m00s"), (61, "1m01s"), (3599, "59m59s"), (3600, "1h00m"),
        (86_399, "23h59m"), (90_000, "25h00m"),
    ] as [(Double, String)])
    func durations(_ seconds: Double, _ expected: String) {
        #expect(TerminalProgress.duration(seconds) == expected)
    }

    /// At most one redraw per interval, each overwriting the line; finishing clears it.
    @Test func drawsAtMostFiveTimesASecondAndClearsAtTheEnd() throws {
        let pipe = Pipe()
        let clock = ManualClock()
        let progress = TerminalProgress(
            "replay", total: 100, descriptor: pipe.fileHandleForWriting.fileDescriptor, now: { clock.seconds })
        for (time, done) in [(0.1, 10), (0.25, 20), (0.3, 30), (0.44, 40), (0.5, 50)] as [(Double, Int64)] {
            clock.seconds = time
            progress.update(done)
        }
        progress.finish()
        progress.finish()
        try pipe.fileHandleForWriting.close()
        let written = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(
            written
                == "\r\u{1B}[Kreplay: 20/100 events (20%), 80 events/s, ETA 1s"
                + "\r\u{1B}[Kreplay: 50/100 events (50%), 100 events/s, ETA 1s" + "\r\u{1B}[K")
    }

    @Test func nothingIsDrawnForShortWork() throws {
        let pipe = Pipe()
        let clock = ManualClock()
        let progress = TerminalProgress(
            "replay", total: nil, descriptor: pipe.fileHandleForWriting.fileDescriptor, now: { clock.seconds })
        clock.seconds = 0.19
        progress.update(1000)
        progress.finish()
        try pipe.fileHandleForWriting.close()
        #expect(pipe.fileHandleForReading.readDataToEndOfFile().isEmpty)
    }
}

private final class ManualClock {
    var seconds = 0.0
}
