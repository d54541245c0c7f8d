import Testing

@testable import ProjectorRuntime

/// The catch-ups a projector logs: the first of a kind at once, the rest counted into a line
/// a minute, so that a catch-up for each event with personal data does not grow the log.
@Suite struct CatchUpLinesTests {
    @Test func theFirstOfAKindIsLoggedAtOnceAndTheRestOnceAMinute() {
        var lines = CatchUpLines()
        let start = ContinuousClock.now
        #expect(
            lines.caughtUp(.personalData(254), events: 1, position: 254, at: start)
                == "caught up through history to open the personal data of position 254: events=1 position=254")
        // Another kind is not held back by the first.
        #expect(lines.caughtUp(.gap(at: 300), events: 5, position: 304, at: start + .seconds(1)) != nil)
        for second in 2..<40 {
            let position = Int64(300 + second)
            let at = start + .seconds(second)
            let line = lines.caughtUp(.personalData(position), events: 2, position: position, at: at)
            #expect(line == nil)
        }
        #expect(lines.due(at: start + .seconds(59)) == [])
        #expect(
            lines.due(at: start + .seconds(60))
                == ["caught up through history to open personal data 38 more times in 60 s: events=76 position=339"])
        #expect(lines.due(at: start + .seconds(200)) == [])
        // After a quiet minute, the next one has its own line again.
        #expect(lines.caughtUp(.personalData(400), events: 1, position: 400, at: start + .seconds(200)) != nil)
        #expect(lines.caughtUp(.personalData(401), events: 1, position: 401, at: start + .seconds(201)) == nil)
        #expect(
            lines.remaining(at: start + .seconds(205))
                == ["caught up through history to open personal data 1 more time in 5 s: events=1 position=401"])
        #expect(lines.remaining(at: start + .seconds(206)) == [])
    }

    @Test func aCountedCatchUpAfterTheIntervalBringsTheLineWithIt() {
        var lines = CatchUpLines()
        let start = ContinuousClock.now
        _ = lines.caughtUp(.heartbeatAhead(10), events: 3, position: 10, at: start)
        #expect(lines.caughtUp(.heartbeatAhead(20), events: 4, position: 20, at: start + .seconds(30)) == nil)
        #expect(
            lines.caughtUp(.heartbeatAhead(30), events: 5, position: 30, at: start + .seconds(61))
                == "caught up through history as a heartbeat's head was ahead 2 more times in 61 s: events=9 "
                + "position=30")
    }
}
