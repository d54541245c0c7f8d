import Foundation
import StrataTesting

/// How hard a fault test pushes and where its random moments fall, from the environment:
/// `STRATA_FAULT_KILLS` kills (default 5, small enough for CI) and `STRATA_FAULT_SEED` (default
/// a fresh one). The seed is printed, so a failing run can be repeated with the same choices
/// (the same kill points; the processes' own timing still varies).
struct FaultPlan {
    let kills: Int
    let seed: UInt64
    private var generator: SplitMix64

    init(_ test: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        kills = environment["STRATA_FAULT_KILLS"].flatMap { Int($0) }.map { max(1, $0) } ?? 5
        seed = environment["STRATA_FAULT_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
        generator = SplitMix64(seed: seed)
        print(
            "\(test): \(kills) kills, seed \(seed) (STRATA_FAULT_KILLS=\(kills) STRATA_FAULT_SEED=\(seed) repeats it)")
    }

    mutating func next(in range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &generator)
    }
}
