import Foundation
import StrataTesting
import Testing

/// Chromium from the system, if installed (Debian: `apt-get install chromium`).
enum Chromium {
    static let executable: URL? = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        .split(separator: ":")
        .flatMap { directory in ["chromium", "chromium-browser"].map { "\(directory)/\($0)" } }
        .first { FileManager.default.isExecutableFile(atPath: $0) }
        .map { URL(fileURLWithPath: $0) }

    /// Runs headless Chromium on `page` with a profile of its own, so runs never share state.
    static func run(_ arguments: [String], page: URL, in directory: URL) throws -> ChildProcess.Result {
        try ChildProcess.run(
            executable!,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                "--user-data-dir=\(directory.appendingPathComponent("profile").path)",
            ] + arguments + [page.absoluteString])
    }
}

/// The report in a real browser: it parses as HTML with its SVG intact and paints a page
/// that is not blank.
@Suite struct ReportBrowserTests {
    @Test(.enabled(if: Chromium.executable != nil, "chromium is not installed (apt-get install chromium)"))
    func theReportPaintsInHeadlessChromium() throws {
        let book = try ReportFixtures.book()
        try withTemporaryDirectory { dir in
            let report = dir.appendingPathComponent("report.html")
            let html = try ReportFixtures.render(book)
            try Data(html.utf8).write(to: report)
            let blank = dir.appendingPathComponent("blank.html")
            try Data("<!DOCTYPE html><html><head><title>blank</title></head><body></body></html>".utf8).write(to: blank)

            // The DOM after parsing: every chart and every bar survived, no script appeared.
            let dom = try Chromium.run(["--dump-dom"], page: report, in: dir)
            #expect(dom.exitCode == 0, "\(dom.stderr)")
            #expect(dom.stdout.components(separatedBy: "<svg").count - 1 == 5)
            #expect(
                dom.stdout.components(separatedBy: "<rect").count == html.components(separatedBy: "<rect").count,
                "\(dom.stdout)")
            #expect(dom.stdout.contains("Tom &amp; Jerry &lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(!dom.stdout.contains("<script"))

            // Screenshots of the report and of a blank page, the same size.
            var sizes: [Int] = []
            for page in [report, blank] {
                let png = dir.appendingPathComponent(page.lastPathComponent + ".png")
                let shot = try Chromium.run(
                    ["--screenshot=\(png.path)", "--window-size=1280,2400"], page: page, in: dir)
                #expect(shot.exitCode == 0, "\(shot.stderr)")
                let bytes = try [UInt8](Data(contentsOf: png))
                // A PNG whose header (IHDR) says 1280 × 2400.
                #expect(Array(bytes.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
                #expect(bytes.count > 24 && bytes[16..<24].elementsEqual([0, 0, 0x05, 0x00, 0, 0, 0x09, 0x60]))
                sizes.append(bytes.count)
            }
            // Text, bars and tables compress far worse than an empty white page.
            #expect(sizes[0] > 50_000, "report screenshot \(sizes[0]) bytes")
            #expect(sizes[0] > 5 * sizes[1], "report \(sizes[0]) bytes, blank page \(sizes[1]) bytes")
        }
    }
}
