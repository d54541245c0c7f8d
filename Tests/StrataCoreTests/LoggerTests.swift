import StrataCore
import StrataTesting
import Synchronization
import Testing

private final class Lines: Sendable {
    let collected = Mutex<[String]>([])
    func append(_ line: String) { collected.withLock { $0.append(line) } }
    var all: [String] { collected.withLock { $0 } }
}

@Suite("Logger")
struct LoggerTests {
    @Test func writesOneTimestampedLinePerMessageAtOrAboveItsLevel() {
        let lines = Lines()
        let logger = Logger(label: "serve", minimumLevel: .info, clock: FixedClock()) { lines.append($0) }
        logger.debug("not shown")
        logger.info("ready commands=tcp://127.0.0.1:7701")
        logger.warning("slow")
        logger.error("failed")
        #expect(
            lines.all == [
                "2026-11-20T10:00:00.000Z info serve: ready commands=tcp://127.0.0.1:7701\n",
                "2026-11-20T10:00:00.000Z warning serve: slow\n",
                "2026-11-20T10:00:00.000Z error serve: failed\n",
            ])
    }

    @Test func levelsAreOrdered() {
        #expect(Logger.Level.debug < .info && Logger.Level.info < .warning && Logger.Level.warning < .error)
    }
}
