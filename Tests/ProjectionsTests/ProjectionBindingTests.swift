import Foundation
import ProjectorRuntime
import Projections
import StrataTesting
import Testing

/// A projection's declared statements are run again and again with values bound in place from
/// a buffer of the run's own; what each run binds must be all that it sees.
@Suite struct ProjectionBindingTests {
    private static let insert = ProjectionStatement("INSERT INTO notes (id, body, tag) VALUES (?, ?, ?)")
    private static let select = ProjectionStatement("SELECT body, tag FROM notes WHERE id = ? AND ? IS NULL")

    private struct Notes: Projection {
        var name: String { "notes" }
        var schema: ProjectionSchema {
            ProjectionSchema(
                version: 1, statements: ["CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, tag TEXT)"])
        }
        var categories: [String]? { [] }
        func apply(_ event: ProjectedEvent, to tables: any ProjectionTables) throws {}
    }

    /// A run that binds fewer values than the statement has parameters leaves the rest NULL,
    /// not what the run before bound there (text that lay in a buffer freed since), and text
    /// of every length, empty and not ASCII, arrives whole beside integers and NULLs.
    @Test func aParameterARunLeavesOutIsNullNotWhatTheRunBeforeBound() throws {
        let directory = try ChildProcess.temporaryDirectory("binding")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("notes.db").path
        let database = try ProjectionDatabase(path: path, name: "notes", projections: [Notes()])
        let tables = database.tables
        let long = String(repeating: "ü-", count: 300)
        try tables.run(Self.insert, [1, .text(long), "first"])
        try tables.run(Self.insert, [2, "", nil])
        try tables.run(Self.insert, [3, "€"])
        try tables.run(Self.insert, [4])
        let rows = try tables.query("SELECT id, body, tag FROM notes ORDER BY id", [])
        #expect(
            rows == [
                [1, .text(long), "first"], [2, "", .null], [3, "€", .null], [4, .null, .null],
            ])
        #expect(try tables.rows(Self.select, [1, 7]) == [])
        #expect(try tables.rows(Self.select, [1]) == [[.text(long), "first"]])
    }
}
