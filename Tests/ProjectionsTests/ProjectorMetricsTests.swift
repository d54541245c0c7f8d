import Foundation
@testable import ProjectorRuntime
import StrataCore
import Testing

/// The lag a projector reports: in events, the head it learnt less its checkpoint; in seconds,
/// while behind, the time since the last applied event was recorded, or since the process
/// started while that is not known.
@Suite struct ProjectorMetricsTests {
    let metrics = ProjectorMetrics(registry: MetricsRegistry(MetricSet()), projection: "readmodels")

    /// A series' value in the rendered exposition.
    func value(_ name: String) -> Double? {
        let prefix = name + "{projection=\"readmodels\"} "
        return metrics.registry.rendered().split(separator: "\n").first { $0.hasPrefix(prefix) }
            .flatMap { Double($0.dropFirst(prefix.count)) }
    }

    @Test func nothingIsShownBeforeTheProjectorStarts() {
        #expect(value("strata_projection_position") == nil)
        #expect(metrics.registry.rendered().contains("# TYPE strata_projection_position gauge"))
    }

    @Test func behindBeforeAnythingIsAppliedTheSecondsCountFromTheStart() {
        metrics.started(checkpoint: 10)
        metrics.learnt(head: 25)
        metrics.refresh(now: .now().adding(milliseconds: 60_000))
        #expect(value("strata_projection_lag_events") == 15)
        #expect(value("strata_projection_last_event_timestamp_seconds") == 0)
        let seconds = value("strata_projection_lag_seconds") ?? 0
        #expect(seconds >= 59 && seconds <= 70, "\(seconds)")
    }

    @Test func theEventAtTheCheckpointDatesTheLag() {
        metrics.started(checkpoint: 10)
        metrics.learnt(head: 25)
        metrics.lastApplied(recordedAt: "2026-01-02T09:00:00.000Z")
        let recorded = Timestamp("2026-01-02T09:00:00.000Z")!
        metrics.refresh(now: recorded.adding(milliseconds: 90_000))
        let seconds = Double(recorded.millisecondsSinceEpoch) / 1000
        #expect(value("strata_projection_last_event_timestamp_seconds") == seconds)
        #expect(value("strata_projection_lag_seconds") == 90)
        metrics.applied(count: 15, checkpoint: 25, lastRecordedAt: "2026-01-02T09:05:00.000Z")
        #expect(value("strata_projection_lag_events") == 0)
        #expect(value("strata_projection_lag_seconds") == 0)
    }

    /// The lag in seconds is whole milliseconds, as times are recorded, without the noise of
    /// subtracting two times in seconds since 1970 (`0.45600008964538574` for 456 ms).
    @Test func theLagInSecondsIsWholeMilliseconds() {
        metrics.started(checkpoint: 10)
        metrics.learnt(head: 25)
        metrics.lastApplied(recordedAt: "2026-01-02T09:00:00.123Z")
        metrics.refresh(now: Timestamp("2026-01-02T09:00:00.579Z")!)
        let line = metrics.registry.rendered().split(separator: "\n")
            .first { $0.hasPrefix("strata_projection_lag_seconds{") }
        #expect(line == #"strata_projection_lag_seconds{projection="readmodels"} 0.456"#)
    }

    /// History's head below the checkpoint (the store went back) is shown as it is.
    @Test func aHeadBelowTheCheckpointIsShownAsItIs() {
        metrics.started(checkpoint: 30)
        metrics.learnt(head: 20)
        #expect(value("strata_projection_head_position") == 20)
        #expect(value("strata_projection_lag_events") == -10)
        #expect(value("strata_projection_lag_seconds") == 0)
    }
}
