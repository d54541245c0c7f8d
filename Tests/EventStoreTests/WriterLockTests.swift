import EventStore
import Foundation
import Testing

@Suite struct WriterLockTests {
    /// The lock file is written (the holder's pid), so one that is a symbolic link is refused
    /// rather than followed: its target is left as it was.
    @Test func aLockFileThatIsASymbolicLinkIsRefusedAndItsTargetKept() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-lock-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let target = directory.appendingPathComponent("precious").path
        try Data("keep me\n".utf8).write(to: URL(fileURLWithPath: target))
        let store = directory.appendingPathComponent("events.db").path
        try FileManager.default.createSymbolicLink(atPath: store + "-lock", withDestinationPath: target)

        let refusal = #expect(throws: StoreError.self) { _ = try WriterLock.acquire(for: store) }
        #expect(
            refusal?.message.contains("cannot open the writer lock \(store)-lock") == true, "\(String(describing: refusal))")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep me\n")

        // A plain lock file is taken, and records its holder.
        try FileManager.default.removeItem(atPath: store + "-lock")
        let lock = try WriterLock.acquire(for: store)
        #expect(try String(contentsOfFile: store + "-lock", encoding: .utf8) == "\(getpid())\n")
        lock.release()
    }
}
