import Foundation
import StrataCore
import Testing

/// `OneShot`: the value a thread hands back, waited for by another.
@Suite("OneShot")
struct OneShotTests {
    /// A waiter that comes first blocks until the value is set on the other thread, then has
    /// it; waiting again, here or on another thread, returns the same value at once.
    @Test(.timeLimit(.minutes(1))) func theWaiterGetsTheValueOnceItIsMadeAndEveryWaitAfter() {
        let shot = OneShot<[Int]>()
        let started = ContinuousClock.now
        startThread(named: "oneshot-maker") {
            usleep(50_000)
            shot.fulfil([1, 2, 3])
        }
        #expect(shot.wait() == [1, 2, 3])
        // The maker sleeps 50 ms before it sets the value: a wait that returned sooner did not wait.
        #expect(ContinuousClock.now - started >= .milliseconds(50))
        #expect(shot.wait() == [1, 2, 3])
        let again = OneShot<[Int]>()
        startThread(named: "oneshot-waiter") { again.fulfil(shot.wait()) }
        #expect(again.wait() == [1, 2, 3])
    }

    /// Made before anyone waits: the first wait does not block.
    @Test func aValueMadeFirstIsThereAtOnce() {
        let shot = OneShot<String>()
        shot.fulfil("ready")
        #expect(shot.wait() == "ready")
    }
}
