/*
 * @test
 * @summary Four threads, two on each thread server, meet at a CyclicBarrier many times: its
 *          ReentrantLock and Condition hand the lock over and wake waiters across nodes and
 *          on one node, with new condition and queue nodes made shared on every trip. Every
 *          await returns normally (a waiter polling its own condition node while another
 *          thread of its node makes that node shared once failed here with "no shared-object
 *          cache"), and the barrier trips exactly once per round.
 * @library /lib
 * @run main/othervm BarrierAcrossNodes
 */
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;

public class BarrierAcrossNodes {
    static final int PARTIES = 4;
    static final int ROUNDS = 120;

    public static void main(String[] args) throws Exception {
        Checks checks = new Checks("BarrierAcrossNodes");
        AtomicInteger trips = new AtomicInteger();
        CyclicBarrier barrier = new CyclicBarrier(PARTIES, trips::incrementAndGet);
        Throwable[] failures = new Throwable[PARTIES];
        int[] passed = new int[PARTIES];
        Thread[] threads = new Thread[PARTIES];
        for (int t = 0; t < PARTIES; t++) {
            int me = t;
            threads[t] = new Thread(() -> {
                try {
                    for (int round = 0; round < ROUNDS; round++) {
                        barrier.await();
                        passed[me]++;
                    }
                } catch (Throwable e) {
                    failures[me] = e;
                    barrier.reset();  // the others stop waiting (BrokenBarrierException)
                }
            }, "party-" + t);
            threads[t].start();
        }
        for (Thread t : threads) {
            t.join();
        }
        for (int t = 0; t < PARTIES; t++) {
            if (failures[t] != null) {
                checks.fail("party " + t + " failed in round " + passed[t] + ": " + failures[t]);
                failures[t].printStackTrace();
            }
            checks.equal("rounds party " + t + " passed", passed[t], ROUNDS);
        }
        checks.equal("trips", trips.get(), ROUNDS);
        checks.done();
        System.out.println("BarrierAcrossNodes: ok");
    }
}
