import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

extension FaultSuiteTests {
    /// A damaged `events.db` (cut mid-page, a page overwritten, a garbage header) is refused
    /// by `strata serve` at start: exit 1, one line naming the file and what SQLite found,
    /// never a trap and never a "ready". `verify` and `status` say the same when what they read
    /// is damaged.
    @Suite struct DamagedStore {
        enum Damage: String, CaseIterable {
            /// Cut in the middle of a page, half the file gone.
            case truncatedMidPage = "truncated mid-page"
            /// A leaf of the events table, the page nearest the middle, overwritten with garbage.
            case overwrittenEventsPage = "events page overwritten"
            /// A leaf of an index (the journal, an events index), nearest the middle, overwritten.
            case overwrittenIndexPage = "index page overwritten"
            /// The first 100 bytes (SQLite's header) overwritten.
            case garbageHeader = "garbage header"
        }

        @Test func aDamagedStoreIsRefusedAtStartWithAClearMessage() throws {
            let pristine = try ChildProcess.temporaryDirectory("strata-damaged")
            defer { try? FileManager.default.removeItem(at: pristine) }
            let system = try System("damaged")
            try system.send(system.workload.setup())
            try system.send((0..<150).flatMap { system.workload.loan($0) })
            let head = try system.service.store().head()
            #expect(system.service.stop() == 0)
            // The last connection's close checkpoints the WAL into the file and removes it.
            #expect(!FileManager.default.fileExists(atPath: system.storePath + "-wal"))
            for name in ["keys.json", "events.db", "subject-keys.db", "checkpoint.key", "checkpoint.pub"] {
                try FileManager.default.copyItem(
                    at: system.data.appendingPathComponent(name), to: pristine.appendingPathComponent(name))
            }
            let size = try Data(contentsOf: pristine.appendingPathComponent("events.db")).count
            // Sound, it starts, and says how long its structure check took.
            let sound = try serve(pristine)
            let checked = try sound.waitForLine(containing: "PRAGMA quick_check found")
            #expect(sound.stop() == 0)
            print(
                "damaged store: \(head) events, \(size) bytes; "
                    + checked.split(separator: " ").suffix(6).joined(separator: " "))

            for damage in Damage.allCases {
                let data = try ChildProcess.temporaryDirectory("strata-damaged-\(damage)")
                defer { try? FileManager.default.removeItem(at: data) }
                for name in ["keys.json", "events.db", "subject-keys.db", "checkpoint.key", "checkpoint.pub"] {
                    try FileManager.default.copyItem(
                        at: pristine.appendingPathComponent(name), to: data.appendingPathComponent(name))
                }
                let path = data.appendingPathComponent("events.db").path
                let page = try Self.damage(path, damage)

                let service = try serve(data)
                let exit = service.waitForExit(timeout: 60)
                if exit == nil { service.send(signal: SIGKILL) }
                #expect(exit == 1, "\(damage): serve exit \(String(describing: exit)): \(service.log)")
                #expect(!service.log.contains(" ready "), "\(damage): served a damaged store: \(service.log)")
                let refusal = service.log.split(separator: "\n").last.map(String.init) ?? ""
                #expect(
                    refusal.hasPrefix("strata serve: refused: \(path) is damaged: ")
                        && refusal.hasSuffix("; restore it from a backup"),
                    "\(damage): \(service.log)")

                let verify = try ChildProcess.strata(["verify", "--data", data.path])
                let status = try ChildProcess.strata(["status", "--data", data.path])
                // A backup checks the copy's structure whole, so it finds every damage, the index
                // page that verify reads past included, and writes nothing.
                let backup = try ChildProcess.strata(["backup", "--data", data.path, "--output", data.path + "/b"])
                #expect(backup.exitCode == 1, "\(damage): backup \(backup.exitCode): \(backup.stdout)\(backup.stderr)")
                #expect(
                    backup.stderr.hasPrefix("strata backup: no backup written: \(path) is damaged: "), "\(backup.stderr)")
                let left = try FileManager.default.contentsOfDirectory(atPath: data.path)
                #expect(!left.contains { $0.hasPrefix(".b.") || $0 == "b" }, "\(damage): a backup was left: \(left)")
                switch damage {
                case .overwrittenIndexPage:
                    // Every event still reads: the chain is intact, and the head is where it was.
                    // The index is what serve's start-up check finds.
                    #expect(verify.exitCode == 0, "\(damage): \(verify.stdout)\(verify.stderr)")
                    #expect(status.exitCode == 0 && status.stdout.contains("head \(head) "), "\(status.stdout)")
                case .overwrittenEventsPage:
                    #expect(verify.exitCode == 1, "\(damage): \(verify.stdout)\(verify.stderr)")
                    #expect(verify.stderr.hasPrefix("strata verify: \(path) is damaged: "), "\(verify.stderr)")
                    // status reads the head alone, which the page in the middle does not hold.
                    #expect(status.exitCode == 0 && status.stdout.contains("head \(head) "), "\(status.stdout)")
                case .truncatedMidPage, .garbageHeader:
                    #expect(verify.exitCode == 1, "\(damage): \(verify.stdout)\(verify.stderr)")
                    #expect(verify.stderr.hasPrefix("strata verify: \(path) is damaged: "), "\(verify.stderr)")
                    #expect(status.exitCode == 1, "\(damage): \(status.stdout)\(status.stderr)")
                    #expect(status.stderr.hasPrefix("strata status: \(path) is damaged: "), "\(status.stderr)")
                }
                print(
                    "damaged store: \(damage.rawValue)\(page.map { " (page \($0))" } ?? ""): serve exit "
                        + "\(exit.map(String.init) ?? "none"), verify \(verify.exitCode), status \(status.exitCode), "
                        + "backup \(backup.exitCode): "
                        + refusal)
            }
        }

        /// The first start makes the checkpoint key; a start refused for a damaged store must
        /// not, or the key would sign nothing yet stand for a store never served.
        @Test func aRefusedFirstStartMakesNoCheckpointKey() throws {
            let data = try ChildProcess.temporaryDirectory("strata-damaged-first")
            defer { try? FileManager.default.removeItem(at: data) }
            let keys = try ChildProcess.strata(["keys", "new", "svc", "--scope", "commands,history", "--data", data.path])
            #expect(keys.exitCode == 0, "\(keys.stderr)")
            let path = data.appendingPathComponent("events.db").path
            try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }).write(to: URL(fileURLWithPath: path))

            let service = try serve(data)
            let exit = service.waitForExit(timeout: 60)
            if exit == nil { service.send(signal: SIGKILL) }
            #expect(exit == 1, "serve exit \(String(describing: exit)): \(service.log)")
            #expect(service.log.contains("strata serve: refused: \(path) is damaged: "), "\(service.log)")
            for name in ["checkpoint.key", "checkpoint.pub"] {
                #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent(name).path), "\(name)")
            }
        }

        private func serve(_ data: URL) throws -> StrataProcess {
            let any = "tcp://127.0.0.1:*"
            return try StrataProcess([
                "serve", "--data", data.path, "--commands", any, "--events", any, "--history", any,
            ])
        }

        /// Damages the file at `path` as `damage` says; the page number overwritten, if one was.
        static func damage(_ path: String, _ damage: Damage) throws -> Int? {
            // The checkpoints table is small enough to be one table leaf: not the one to damage.
            let checkpointsRoot = try SQLiteConnection(path: path, mode: .readOnly)
                .scalarInteger("SELECT rootpage FROM sqlite_master WHERE name = 'checkpoints'").map { Int($0) }
            let file = try #require(FileHandle(forUpdatingAtPath: path))
            defer { try? file.close() }
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
            let pages = bytes.count / pageSize
            var garbage = SplitMix64(seed: 0x5354_5241)
            func noise(_ count: Int) -> Data {
                Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &garbage) })
            }
            switch damage {
            case .truncatedMidPage:
                try file.truncate(atOffset: UInt64(pages / 2 * pageSize + pageSize / 2))
                return nil
            case .garbageHeader:
                try file.seek(toOffset: 0)
                try file.write(contentsOf: noise(100))
                return nil
            case .overwrittenEventsPage, .overwrittenIndexPage:
                // A b-tree page's first byte says its kind: 13 a table leaf, 10 an index leaf.
                let kind: UInt8 = damage == .overwrittenEventsPage ? 13 : 10
                let candidates = (2...pages).filter { bytes[($0 - 1) * pageSize] == kind && $0 != checkpointsRoot }
                let middle = try #require(candidates.min { abs($0 - pages / 2) < abs($1 - pages / 2) })
                try file.seek(toOffset: UInt64((middle - 1) * pageSize))
                try file.write(contentsOf: noise(pageSize))
                return middle
            }
        }
    }
}
