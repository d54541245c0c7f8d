import Foundation
import StrataTesting
import Testing

/// The tests' own way of running a process: a child that writes much to both streams, or
/// answers before reading all its input, never blocks it, and one that never reads it does not
/// end the run.
@Suite("Child processes")
struct ChildProcessTests {
    @Test func aChildWritingMuchToStandardErrorIsReadToTheEnd() throws {
        let result = try ChildProcess.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "head -c 200000 /dev/zero | tr '\\0' x >&2; echo out"])
        #expect(result.exitCode == 0)
        #expect(result.stdout == "out\n")
        #expect(result.stderr.count == 200_000)
    }

    @Test func aChildThatAnswersBeforeReadingItsInputIsNotBlocked() throws {
        let input = String(repeating: "line of input\n", count: 20_000)
        let result = try ChildProcess.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "head -c 200000 /dev/zero | tr '\\0' y; cat > /dev/null"],
            stdin: input)
        #expect(result.exitCode == 0)
        #expect(result.stdout.count == 200_000)
    }

    /// A child that ends without reading its input (a refusal of its arguments, at once) leaves
    /// the input's writer a broken pipe: that is no reason to end the whole test run by SIGPIPE.
    /// The input is larger than a pipe holds, so the write is still under way when the child ends.
    @Test func aChildThatEndsWithoutReadingItsInputEndsNothingElse() throws {
        let input = String(repeating: "line of input\n", count: 20_000)
        let result = try ChildProcess.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "echo refused >&2; exit 2"], stdin: input)
        #expect(result.exitCode == 2)
        #expect(result.stderr == "refused\n")
    }
}
