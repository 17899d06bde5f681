/*
 * @test
 * @summary A counter object incremented under synchronized by 4 threads (on the thread
 *          servers) reaches the exact total; synchronized methods and synchronized blocks on
 *          the same object share one monitor.
 * @library /lib
 * @run main/othervm SynchronizedCounter
 */
public class SynchronizedCounter {
    static final int THREADS = 4;
    static final int INCREMENTS = 2000;

    static final class Counter {
        long value;
        long viaMethod;

        synchronized void incrementByMethod() {
            value++;
            viaMethod++;
        }
    }

    static final class Adder extends Thread {
        final Counter counter;
        long garbage;

        Adder(Counter counter, int k) {
            super("adder-" + k);
            this.counter = counter;
        }

        @Override
        public void run() {
            for (int i = 0; i < INCREMENTS; i++) {
                if ((i & 1) == 0) {
                    counter.incrementByMethod();
                } else {
                    synchronized (counter) {
                        counter.value++;
                    }
                }
                if (i % 50 == 0) {
                    garbage += Churn.garbage(500);
                }
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Counter counter = new Counter();
        Adder[] adders = new Adder[THREADS];
        for (int k = 0; k < THREADS; k++) {
            adders[k] = new Adder(counter, k);
        }
        Threads.startAll(adders);
        Threads.joinAll(adders);
        Checks c = new Checks("SynchronizedCounter");
        for (Adder a : adders) {
            c.check(!a.isAlive(), a.getName() + " is alive after join");
        }
        synchronized (counter) {
            c.equal("counter.value", counter.value, (long) THREADS * INCREMENTS);
            c.equal("increments through the synchronized method", counter.viaMethod,
                    (long) THREADS * INCREMENTS / 2);
        }
        c.done();
    }
}
