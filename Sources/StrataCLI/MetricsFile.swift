import Dispatch
import Foundation
import StrataCore
import Synchronization

/// `--metrics-file PATH`: the process's metrics in the Prometheus text exposition format,
/// rewritten every few seconds for node_exporter's textfile collector (or anything else
/// that reads the file).
///
/// Each write renders the registry and replaces the file whole (`AtomicFile`: a temporary
/// file beside it, renamed over it), so a reader never sees half a file. Its own thread does
/// the work; the threads that record metrics only take the registry's lock. A write that
/// fails is logged once (and once more when writing works again); the process goes on, as
/// metrics are not worth stopping a service for. The first write happens in `start`, so a
/// path that cannot be written at all is refused at start instead.
///
/// Only a regular file is replaced, or a path where nothing is yet: something else there (a
/// FIFO, a device, a socket) is refused, and never opened. `AtomicFile` writes into such a
/// path as a shell's `>` would, and opening a FIFO without a reader to write it waits for one:
/// `serve --metrics-file` naming one hung at its start, and a later write blocked the thread
/// that a graceful stop waits for.
final class MetricsFile: Sendable {
    static let defaultIntervalSeconds: Int64 = 5

    let path: String
    private let intervalSeconds: Double
    private let registry: MetricsRegistry
    private let logger: Logger
    private let beforeWrite: @Sendable () -> Void
    private let stopRequested = Atomic<Bool>(false)
    private let failing = Atomic<Bool>(false)
    /// One write at a time: the thread's, and one asked for out of turn (`writeNow`), would
    /// otherwise share the temporary file.
    private let writing = Mutex(())
    private let wake = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)

    private init(
        path: String, intervalSeconds: Double, registry: MetricsRegistry, logger: Logger,
        beforeWrite: @escaping @Sendable () -> Void
    ) {
        self.path = path
        self.intervalSeconds = intervalSeconds
        self.registry = registry
        self.logger = logger
        self.beforeWrite = beforeWrite
    }

    /// Writes the file once (throwing exit 2 when it cannot be written), then starts the
    /// thread that rewrites it every `intervalSeconds`.
    static func start(
        path: String, intervalSeconds: Double, registry: MetricsRegistry, logger: Logger,
        beforeWrite: @escaping @Sendable () -> Void = {}
    ) throws -> MetricsFile {
        let file = MetricsFile(
            path: path, intervalSeconds: intervalSeconds, registry: registry, logger: logger, beforeWrite: beforeWrite)
        do {
            try file.writeOnce()
        } catch {
            throw CommandFailure.environment("--metrics-file: \(error)")
        }
        startThread(named: "strata-metrics", priority: .yielding) { file.run() }
        logger.info("writing metrics every \(MetricSet.number(intervalSeconds)) s file=\(Logger.field(path))")
        return file
    }

    /// Writes the file now, out of turn: for figures that just became meaningful (a projector
    /// that has opened its file), so that they are there once the process says it is ready.
    func writeNow() {
        write()
    }

    /// Ends the thread and writes the file a last time, with everything counted until now.
    func stop() {
        guard !stopRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        ended.wait()
        write()
    }

    private func run() {
        while !stopRequested.load(ordering: .acquiring) {
            _ = wake.wait(timeout: .now() + .milliseconds(Int(intervalSeconds * 1000)))
            if stopRequested.load(ordering: .acquiring) { break }
            write()
        }
        ended.signal()
    }

    /// One write; a failure is logged when it starts and when it ends, not on every try.
    private func write() {
        do {
            try writeOnce()
            if failing.exchange(false, ordering: .relaxed) { logger.info("writing \(path) works again") }
        } catch {
            if !failing.exchange(true, ordering: .relaxed) {
                let every = MetricSet.number(intervalSeconds)
                logger.warning("cannot write the metrics file (trying again every \(every) s): \(error)")
            }
        }
    }

    private func writeOnce() throws {
        try Self.requireRegularFile(path)
        try writing.withLock { _ in
            beforeWrite()
            // 0644: the collector usually runs as another user.
            try AtomicFile.write(path, contents: Array(registry.rendered().utf8), mode: 0o644, synchronizing: false)
        }
    }

    /// Refuses (exit 2) a path that leads, its links followed, to something other than a
    /// regular file, naming what is there.
    static func requireRegularFile(_ path: String) throws(CommandFailure) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }  // nothing there yet, or a write will say
        let what: String
        switch info.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFIFO: what = "a FIFO"
        case S_IFDIR: what = "a directory"
        case S_IFCHR: what = "a character device"
        case S_IFBLK: what = "a block device"
        case S_IFSOCK: what = "a socket"
        default: what = "not a regular file"
        }
        throw CommandFailure.environment(
            "\(path) is \(what): the metrics file is replaced whole at each write, so it must be a regular file "
                + "or a path where nothing is yet")
    }
}
