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

@Suite("Logger fields")
struct LoggerFieldTests {
    @Test func levelsAreNamedAsTheCommandLineTakesThem() {
        #expect(Logger.Level(name: "debug") == .debug && Logger.Level(name: "error") == .error)
        #expect(Logger.Level(name: "DEBUG") == nil && Logger.Level(name: "verbose") == nil)
        let logger = Logger(label: "serve", minimumLevel: .info, clock: FixedClock()) { _ in }
        #expect(!logger.isEnabled(.debug) && logger.isEnabled(.info) && logger.isEnabled(.error))
    }

    /// Text from a client must never break a line or forge a field.
    @Test func fieldValuesAreQuotedUnlessTheyArePlainWords() {
        #expect(Logger.field("cmd-1_A") == "cmd-1_A")
        #expect(Logger.field("") == #""""#)
        #expect(Logger.field("two words") == #""two words""#)
        #expect(Logger.field("a=b") == #""a=b""#)
        #expect(Logger.field("say \"hi\"\nposition=1") == #""say \"hi\"\nposition=1""#)
        #expect(Logger.field("back\\slash\r\t\u{1}") == #""back\\slash\r\t\u{1}""#)
        #expect(Logger.field("prêt") == "prêt")
        // C1 controls (CSI among them), bidirectional controls and the separators, as tables show them.
        #expect(Logger.field("a\u{9B}2J") == #""a\u{9b}2J""#)
        #expect(Logger.field("abc\u{202E}dcba") == #""abc\u{202e}dcba""#)
        #expect(Logger.field("one\u{2028}two") == #""one\u{2028}two""#)
    }
}
