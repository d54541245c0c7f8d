import ProjectorRuntime
import Projections
import StrataCore

/// The admin dashboard as `strata demo` prints it, read from readmodels.db.
enum Dashboard {
    static func print(_ snapshot: ProjectionSnapshot, today: LocalDate) throws {
        let dashboard = try snapshot.query("SELECT * FROM dashboard")
        printLine("DASHBOARD at position \(snapshot.checkpoint) (as of \(today))")
        for row in dashboard.rows {
            for (name, value) in zip(dashboard.columns, row) { printLine("  \(name): \(value)") }
        }
    }
}
