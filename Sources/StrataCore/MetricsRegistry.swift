import Synchronization

/// A process's metrics, shared between the threads that record them and the one that
/// writes them out.
///
/// One lock around one `MetricSet`: a hot path takes it once per batch (`update`), never per
/// event, and the writer copies the set under the lock and formats the copy outside it, so
/// a commit never waits for text to be built.
public final class MetricsRegistry: Sendable {
    private let metrics: Mutex<MetricSet>

    public init(_ metrics: MetricSet = MetricSet()) {
        self.metrics = Mutex(metrics)
    }

    /// Runs `body` on the set under the lock: declare families, or record a batch's worth.
    public func update<Result: Sendable>(_ body: (inout MetricSet) -> Result) -> Result {
        metrics.withLock { body(&$0) }
    }

    /// A copy of the set as it is now.
    public var snapshot: MetricSet { metrics.withLock { $0 } }

    /// The text exposition of the set as it is now.
    public func rendered() -> String { snapshot.rendered() }
}
