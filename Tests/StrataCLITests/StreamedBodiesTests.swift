import Foundation
import Testing

@testable import StrataCLI

/// The lines `StreamedBodies` makes of `chunks` written one by one into a real pipe, each
/// read before the next is written, so a line split across chunks arrives in pieces; and how
/// many lines had been handed out after each chunk.
private func lines(fedAs chunks: [[UInt8]]) throws -> (lines: [InputLine], afterChunk: [Int]) {
    var ends: [Int32] = [0, 0]
    // Closed on exec, so that no child another test starts keeps the write end once it runs.
    try #require(pipe(&ends) == 0)
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    defer { close(ends[0]) }
    var bodies = StreamedBodies(descriptor: ends[0], name: "the pipe")
    var lines: [InputLine] = []
    // Once the write end is closed, waits for the end of the input: a child another test is
    // starting holds a copy of every descriptor until it has made its own, for as long as a
    // loaded machine takes, and the end comes only then.
    func readAll(untilTheEnd: Bool = false) throws {
        var waiting = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
        while bodies.descriptor != nil && poll(&waiting, 1, untilTheEnd ? 30_000 : 0) > 0 {
            try bodies.read()
            while let line = bodies.next() { lines.append(line) }
        }
    }
    var afterChunk: [Int] = []
    for chunk in chunks {
        // In pieces smaller than the pipe holds, so the writer never waits for the reader.
        var written = 0
        while written < chunk.count {
            let count = chunk[written...].withUnsafeBytes { write(ends[1], $0.baseAddress, min($0.count, 32 * 1024)) }
            try #require(count > 0)
            written += count
            try readAll()
        }
        afterChunk.append(lines.count)
    }
    close(ends[1])
    try readAll(untilTheEnd: true)
    #expect(bodies.descriptor == nil, "the end of the input is seen")
    return (lines, afterChunk)
}

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

@Suite("strata send's input, read as it arrives")
struct StreamedBodiesTests {
    /// A line is handed out as soon as its `\n` is read, not at the end of the input.
    @Test func eachLineIsHandedOutWhenItsEndArrives() throws {
        let chunks = [#"{"id":"a"}"# + "\n" + #"{"id""#, #":"b"}"# + "\r\n", #"{"id":"c"}"#]
        let read = try lines(fedAs: chunks.map(bytes))
        #expect(read.lines == [#"{"id":"a"}"#, #"{"id":"b"}"#, #"{"id":"c"}"#].map { .body(bytes($0)) })
        // The last line, without an ending, only once the input ends.
        #expect(read.afterChunk == [1, 2, 2])
    }

    /// A byte order mark, at the start of a file saved by a Windows editor or of each file `cat`
    /// joins, is not part of the command: it is dropped, even split across reads, where it was
    /// sent and the command refused MALFORMED (BODY_NOT_JSON at byte 0).
    @Test func aByteOrderMarkIsNotPartOfTheLine() throws {
        let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
        let read = try lines(fedAs: [
            [mark[0]], [mark[1]], [mark[2]] + bytes(#"{"id":"a"}"# + "\r\n"), mark + bytes("\n"),
            mark + bytes(#"{"id":"b"}"#),
        ])
        #expect(read.lines == [#"{"id":"a"}"#, #"{"id":"b"}"#].map { .body(bytes($0)) })
    }

    /// Blank lines (spaces, tabs, a lone `\r`) are skipped, at any length.
    @Test func blankLinesAreSkipped() throws {
        let longBlank = [UInt8](repeating: UInt8(ascii: " "), count: SendCommand.largestBody + 10) + bytes("\t\r\n")
        let read = try lines(fedAs: [bytes("\n \t\n\r\n"), longBlank, bytes("{}\n  ")])
        #expect(read.lines == [.body(bytes("{}"))])
    }

    /// A line over the largest body is counted, not kept, however many reads it spans; one of
    /// exactly the largest body (after its `\r`) is sent.
    @Test func anOverLongLineIsCountedNotKept() throws {
        let limit = SendCommand.largestBody
        let atLimit = [UInt8](repeating: UInt8(ascii: "x"), count: limit) + bytes("\r\n")
        let over = [UInt8](repeating: UInt8(ascii: "y"), count: 3 * limit + 5) + bytes("\r\n")
        let overAtEnd = [UInt8](repeating: UInt8(ascii: "z"), count: limit + 1)
        let read = try lines(fedAs: [atLimit, over, bytes("{}\n"), overAtEnd])
        #expect(read.lines.count == 4)
        #expect(read.lines.first == .body([UInt8](repeating: UInt8(ascii: "x"), count: limit)))
        let rest: [InputLine] = [.tooLarge(bytes: 3 * limit + 5), .body(bytes("{}")), .tooLarge(bytes: limit + 1)]
        #expect(Array(read.lines.dropFirst()) == rest)
    }

    /// Input that cannot be read is named, and nothing more is waited for.
    @Test func anUnreadableDescriptorIsNamed() throws {
        let directory = open("/", O_RDONLY | O_DIRECTORY)
        try #require(directory >= 0)
        defer { close(directory) }
        var bodies = StreamedBodies(descriptor: directory, name: "/")
        let failure = #expect(throws: CommandFailure.self) { try bodies.read() }
        #expect(failure?.message == "cannot read /: Is a directory")
        #expect(failure?.exitCode == 2)
        #expect(bodies.descriptor == nil)
        #expect(bodies.next() == nil)
    }
}
