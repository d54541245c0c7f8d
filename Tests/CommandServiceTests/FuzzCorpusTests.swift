import Foundation
import StrataTesting
import Testing

/// Every input in the fuzzing corpus (Tests/Fuzz/corpus: the seeds, and whatever a fuzzing
/// run found and was then fixed) replayed through its target's properties by the plain
/// build of StrataFuzz, so that no finding comes back unnoticed.
@Suite struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz/corpus")

    @Test(arguments: ["json", "command", "history", "event", "header"])
    func theCorpusReplaysWithoutAFailure(_ target: String) throws {
        let directory = Self.corpus.appendingPathComponent(target)
        let inputs = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }
        #expect(inputs.count >= 3, "the \(target) corpus has seeds")
        let run = try ChildProcess.run(ChildProcess.product("StrataFuzz"), [target, directory.path])
        #expect(run.exitCode == 0, "\(target): \(run.stderr)")
        #expect(run.stdout == "\(target): \(inputs.count) inputs, no failures\n")
    }

    @Test func anUnknownTargetIsAUsageError() throws {
        let run = try ChildProcess.run(ChildProcess.product("StrataFuzz"), ["xml", Self.corpus.path])
        #expect(run.exitCode == 2)
        #expect(run.stderr.contains("usage: StrataFuzz json|command|history|event|header"))
    }
}
