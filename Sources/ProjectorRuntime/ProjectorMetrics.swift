import EventStore
import StrataCore

/// A projector's metrics (`strata project NAME --metrics-file`), each series labelled with
/// the projection's name so that every projector's file can sit in one textfile directory.
///
/// The projector's thread reports each committed batch and each head it learns (from a
/// heartbeat or a history page); the lag is worked out here, under the registry's lock, so a
/// rendering never shows a position from one moment and a head from another.
public final class ProjectorMetrics: Sendable {
    public let registry: MetricsRegistry
    private let labels: [String]
    private let position: MetricSet.Gauge
    private let head: MetricSet.Gauge
    private let lagEvents: MetricSet.Gauge
    private let lagSeconds: MetricSet.Gauge
    private let lastEventTime: MetricSet.Gauge
    private let applied: MetricSet.Counter
    private let catchUps: MetricSet.Counter

    /// When this object was made, at the process's start: what the lag in seconds counts from
    /// while no applied event's time is known.
    private let startedAt: Double

    /// Declares the projector's families on `registry`, after whatever it holds already. Their
    /// series appear once the projector has opened its file (`started(checkpoint:)`), so a
    /// file written before never shows a position of 0 that the projection does not have.
    public init(registry: MetricsRegistry, projection: String) {
        self.registry = registry
        labels = [projection]
        startedAt = Self.seconds(.now())
        let label = ["projection"]
        (position, head, lagEvents, lagSeconds, lastEventTime, applied, catchUps) = registry.update { metrics in
            (
                metrics.gauge(
                    "strata_projection_position", help: "The projection file's checkpoint: the last position applied.",
                    labels: label),
                metrics.gauge(
                    "strata_projection_head_position",
                    help: "The store's head as the projector last learnt it (heartbeat, history page, live event).",
                    labels: label),
                metrics.gauge(
                    "strata_projection_lag_events",
                    help: "Events behind: head position minus position (negative: the store is behind the file).",
                    labels: label),
                metrics.gauge(
                    "strata_projection_lag_seconds",
                    help: "While behind, seconds since the last applied event was recorded (or since the process "
                        + "started, before that time is known); 0 when caught up.",
                    labels: label),
                metrics.gauge(
                    "strata_projection_last_event_timestamp_seconds",
                    help: "When the last applied event was recorded (unix seconds; 0 until known).",
                    labels: label),
                metrics.counter(
                    "strata_projection_events_applied_total", help: "Events applied to the projection file.",
                    labels: label),
                metrics.counter(
                    "strata_projection_catchups_total",
                    help: "Times the projector caught up through history: on start, after a gap, a heartbeat ahead "
                        + "or behind, a quiet bus.",
                    labels: label)
            )
        }
    }

    /// The file's checkpoint when the projector opens it (as it starts, or again once the file was
    /// removed or replaced under it); the head is not known yet.
    func started(checkpoint: Int64) {
        registry.update { metrics in
            for gauge in [position, head] { metrics.set(gauge, Double(checkpoint), labels: labels) }
            for gauge in [lagEvents, lagSeconds, lastEventTime] { metrics.set(gauge, 0, labels: labels) }
            for counter in [applied, catchUps] { metrics.add(counter, 0, labels: labels) }
            settle(&metrics, now: .now())
        }
    }

    /// A committed batch of `count` events: the checkpoint now, and the last one's time.
    func applied(count: Int, checkpoint: Int64, lastRecordedAt: String?) {
        let recorded = lastRecordedAt.flatMap(Timestamp.init)
        registry.update { metrics in
            metrics.add(applied, Double(count), labels: labels)
            metrics.set(position, Double(checkpoint), labels: labels)
            // An applied event is proof of the head too.
            let known = metrics.value(head, labels: labels) ?? 0
            metrics.set(head, max(known, Double(checkpoint)), labels: labels)
            if let recorded { metrics.set(lastEventTime, Self.seconds(recorded), labels: labels) }
            settle(&metrics, now: .now())
        }
    }

    /// When the event at the checkpoint was recorded, applied before this process started
    /// (history sends it when the projector checks that the store is the file's).
    func lastApplied(recordedAt: String) {
        guard let recorded = Timestamp(recordedAt) else { return }
        registry.update { metrics in
            metrics.set(lastEventTime, Self.seconds(recorded), labels: labels)
            settle(&metrics, now: .now())
        }
    }

    /// The head a history page announced, or a heartbeat (which the projector counts only as far
    /// as its checkpoint, as it may be older than history's last answer).
    func learnt(head announced: Int64) {
        registry.update { metrics in
            metrics.set(head, Double(announced), labels: labels)
            settle(&metrics, now: .now())
        }
    }

    func caughtUp() {
        registry.update { metrics in metrics.add(catchUps, 1, labels: labels) }
    }

    /// Brings the lag in seconds up to `now`; called before each write of the file, so the
    /// figure grows while a stalled projector applies nothing.
    public func refresh(now: Timestamp = .now()) {
        registry.update { metrics in settle(&metrics, now: now) }
    }

    /// The lag follows from the head and the checkpoint; nothing before the projector started.
    private func settle(_ metrics: inout MetricSet, now: Timestamp) {
        guard let checkpoint = metrics.value(position, labels: labels) else { return }
        let behind = (metrics.value(head, labels: labels) ?? checkpoint) - checkpoint
        metrics.set(lagEvents, behind, labels: labels)
        let last = metrics.value(lastEventTime, labels: labels) ?? 0
        let since = last > 0 ? last : startedAt
        // In whole milliseconds, as times are recorded: the difference of two times in seconds
        // since 1970 carries the doubles' rounding (0.45600008964538574 for 456 ms).
        let lag = ((Self.seconds(now) - since) * 1000).rounded() / 1000
        metrics.set(lagSeconds, behind > 0 ? max(0, lag) : 0, labels: labels)
    }

    private static func seconds(_ time: Timestamp) -> Double {
        Double(time.millisecondsSinceEpoch) / 1000
    }
}
