import Foundation
import StrataTesting
import Testing

/// `strata backup` as an operator runs it, on the data directory of a stopped system.
@Suite("strata backup") struct BackupCommandTests {
    /// A stopped system has no `-wal` or `-shm` beside its store, and a new one no projection yet:
    /// a backup's directory under one of those names was in the way of the file the system makes
    /// there (under `events.db-wal`, no command could open the store again). Refused, exit 2,
    /// nothing made; a directory of any other name in the data directory is a backup like any.
    @Test func anOutputThatIsANameOfTheSystemsFilesIsRefused() throws {
        try withTemporaryDirectory { dir in
            let data = dir.path
            try bootstrapAdmin(data: data)
            for name in ["events.db-wal", "events.db-shm", "readmodels.db", "audit.db-wal", "strata.json"] {
                let output = data + "/" + name
                let refused = try strata(["backup", "--data", data, "--output", output], expecting: 2)
                #expect(
                    refused.stderr
                        == "strata backup: \(output) is one of the system's files, which a backup must not replace\n")
                #expect(!FileManager.default.fileExists(atPath: output))
            }
            try strata(["verify", "--data", data], expecting: 0)
            let backup = try strata(["backup", "--data", data, "--output", data + "/backup"], expecting: 0)
            #expect(backup.stdout.contains("backup written to \(data)/backup: events.db"), "\(backup.stdout)")
        }
    }
}
