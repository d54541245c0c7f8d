/// A line of a Linux `stat` file (`/proc/PID/stat`, `/proc/PID/task/TID/stat`), split where
/// the kernel lays it out: the name between the first `(` and the last `)` (a name may hold
/// spaces and parentheses of its own), then the fields from the third on (`state` first).
public struct ProcStat: Sendable {
    /// The thread's or process's name, as the kernel holds it.
    public let name: String
    private let rest: [ArraySlice<UInt8>]

    public init?(_ line: [UInt8]) {
        guard let open = line.firstIndex(of: UInt8(ascii: "(")),
            let close = line.lastIndex(of: UInt8(ascii: ")")), open < close
        else { return nil }
        name = String(decoding: line[(open + 1)..<close], as: UTF8.self)
        // The line ends in a newline, which is no part of the last field.
        rest = line[(close + 1)...].split { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\n") }
    }

    /// Field `number` as proc(5) counts them from 1 (14 is utime, 19 nice), when it is an
    /// integer; nil for the name's fields (1, 2), beyond the line, or not a number.
    public func integer(_ number: Int) -> Int64? {
        let index = number - 3
        guard index >= 0, index < rest.count else { return nil }
        return Int64(String(decoding: rest[index], as: UTF8.self))
    }
}
