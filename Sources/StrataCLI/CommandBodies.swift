import Foundation
import StrataCore

/// One non-blank line of command input, as `SendCommand.pipeline` takes it.
enum InputLine: Equatable {
    /// A body to sign and send exactly as written, without its line ending.
    case body([UInt8])
    /// A line over `SendCommand.largestBody` bytes, not sent and not kept: only its length.
    case tooLarge(bytes: Int)
}

/// Where `SendCommand.pipeline` takes its command bodies from: bodies made in the process
/// (`ListedBodies`), or a file or pipe read as its lines arrive (`StreamedBodies`), so that
/// `tail -f commands.jsonl | strata send` sends each line when it is written.
protocol CommandBodies {
    /// The next line already read, or nil when none is yet (or, once `descriptor` is nil, ever).
    mutating func next() -> InputLine?
    /// The descriptor to wait on for more lines; nil once no more will come.
    var descriptor: Int32? { get }
    /// Reads once what the descriptor holds; called when it is readable. After a failure,
    /// `descriptor` is nil.
    mutating func read() throws(CommandFailure)
}

/// Bodies already in memory.
struct ListedBodies: CommandBodies {
    private let bodies: [[UInt8]]
    private var index = 0

    init(_ bodies: [[UInt8]]) { self.bodies = bodies }

    mutating func next() -> InputLine? {
        guard index < bodies.count else { return nil }
        defer { index += 1 }
        let body = bodies[index]
        return body.count > SendCommand.largestBody ? .tooLarge(bytes: body.count) : .body(body)
    }

    var descriptor: Int32? { nil }

    mutating func read() throws(CommandFailure) {}
}

/// JSON lines read from a descriptor as they arrive: each non-blank line, without its `\n` or
/// `\r\n` and without a byte order mark it starts with; a last line without an ending counts.
/// Memory stays bounded: a line over `SendCommand.largestBody` is counted as it streams past,
/// not kept.
struct StreamedBodies: CommandBodies {
    /// What read errors name: "standard input", or the file's path.
    private let name: String
    private var open: Int32?
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    /// Read and not yet handed out, from `lineStart`; `scanned` bytes of it have no `\n`.
    private var buffer: [UInt8] = []
    private var lineStart = 0
    private var scanned = 0
    /// The over-long line being passed over: its bytes so far, whether all but the last are
    /// blank, and the last.
    private var skipped = 0
    private var skippedBlankBeforeLast = true
    private var skippedLast: UInt8?

    init(descriptor: Int32, name: String) {
        self.open = descriptor
        self.name = name
    }

    var descriptor: Int32? { open }

    mutating func read() throws(CommandFailure) {
        guard let descriptor = open else { return }
        let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        let error = errno
        if count > 0 {
            buffer += chunk[..<count]
        } else if count == 0 {
            open = nil
        } else if error != EINTR && error != EAGAIN {
            open = nil
            throw CommandFailure.environment("cannot read \(name): \(String(cString: strerror(error)))")
        }
    }

    mutating func next() -> InputLine? {
        while true {
            let newline = buffer[(lineStart + scanned)...].firstIndex(of: UInt8(ascii: "\n"))
            let end = newline ?? buffer.count
            if newline == nil && open != nil {
                // No whole line yet. One that cannot be sent any more is counted and let go.
                if skipped > 0 || end - lineStart > SendCommand.largestBody + 1 {
                    passOver(buffer[lineStart..<end])
                    buffer.removeAll(keepingCapacity: true)
                    lineStart = 0
                    scanned = 0
                } else {
                    scanned = end - lineStart
                    compact()
                }
                return nil
            }
            let line = buffer[lineStart..<end]
            lineStart = newline.map { $0 + 1 } ?? end
            scanned = 0
            if skipped > 0 {
                passOver(line)
                let blank =
                    skippedBlankBeforeLast && skippedLast.map { isBlank($0) || $0 == UInt8(ascii: "\r") } ?? true
                let bytes = skipped - (skippedLast == UInt8(ascii: "\r") ? 1 : 0)
                skipped = 0
                skippedBlankBeforeLast = true
                skippedLast = nil
                if !blank { return .tooLarge(bytes: bytes) }
            } else {
                var body = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
                // A byte order mark marks how a file is encoded (Windows' editors and PowerShell write
                // one), not a part of its first command, and no JSON text may start with one: sent,
                // it made the line MALFORMED for a byte the user cannot see.
                body = body.dropFirst(ByteOrderMark.length(at: body))
                if !body.allSatisfy(isBlank) {
                    return body.count > SendCommand.largestBody ? .tooLarge(bytes: body.count) : .body(Array(body))
                }
            }
            if newline == nil { return nil }
        }
    }

    /// Counts `bytes` into the over-long line being passed over.
    private mutating func passOver(_ bytes: ArraySlice<UInt8>) {
        guard let last = bytes.last else { return }
        skippedBlankBeforeLast =
            skippedBlankBeforeLast && skippedLast.map(isBlank) ?? true && bytes.dropLast().allSatisfy(isBlank)
        skippedLast = last
        skipped += bytes.count
    }

    /// Drops the lines handed out once they are most of the buffer, so it does not grow.
    private mutating func compact() {
        guard lineStart > 0, lineStart >= buffer.count / 2 else { return }
        buffer.removeFirst(lineStart)
        lineStart = 0
    }

    private func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
}
