import CSystem

/// glibc's allocator, set for processes that run for hours and allocate per batch.
///
/// By default glibc hands memory back to the kernel as soon as 128 KiB lie free at the top
/// of a heap, and maps each block above its (moving) threshold on its own. The writer and
/// the projectors build and drop batch-sized buffers every turn, so each turn faulted in
/// fresh pages that the kernel zeroed first: under a steady 10 k commands/s that was about a
/// tenth of the writer's time (`perf record`, `clear_page_erms` under `sysmalloc`). Keeping
/// up to 64 MiB free per heap and serving blocks up to 16 MiB from the heap stops the churn;
/// `strata bench memory` holds resident memory to its bound with these settings.
public enum AllocatorTuning {
    public static func apply() {
        _ = mallopt(M_MMAP_THRESHOLD, 16 << 20)
        _ = mallopt(M_TRIM_THRESHOLD, 64 << 20)
        _ = mallopt(M_TOP_PAD, 4 << 20)
    }
}
