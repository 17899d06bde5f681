/*
 * @test
 * @summary A thread on a thread server spins on a volatile boolean that main sets after a
 *          delay and then sees main's earlier plain write; then values are handed back and
 *          forth through a volatile turn counter. Every spin is bounded.
 * @library /lib
 * @run main/othervm VolatileSpin
 */
public class VolatileSpin {
    static final long LIMIT_NANOS = 30_000_000_000L;
    static final int ROUNDS = 200;

    static final class Shared {
        volatile boolean go;
        volatile int turn;
        int plain;
        long value;
        long reply;
    }

    static final class Spinner extends Thread {
        final Shared s;
        boolean timedOut;
        long spins;
        int plainSeen;
        long sumSeen;
        String error;
        long garbage;

        Spinner(Shared s) {
            super("spinner");
            this.s = s;
        }

        @Override
        public void run() {
            long deadline = System.nanoTime() + LIMIT_NANOS;
            while (!s.go) {
                if ((++spins & 1023) == 0) {
                    garbage += Churn.garbage(10);
                    if (System.nanoTime() > deadline) {
                        timedOut = true;
                        return;
                    }
                }
            }
            plainSeen = s.plain;
            for (int i = 1; i <= ROUNDS; i++) {
                while (s.turn != 2 * i - 1) {
                    if (System.nanoTime() > deadline) {
                        error = "timed out waiting for turn " + (2 * i - 1) + ", turn is " + s.turn;
                        return;
                    }
                }
                long v = s.value;
                sumSeen += v;
                s.reply = v + 1;
                s.turn = 2 * i;
                garbage += Churn.garbage(100);
            }
        }
    }

    static long valueOf(int i) {
        return i * 1_000_003L + ((long) i << 40);
    }

    public static void main(String[] args) throws Exception {
        Shared s = new Shared();
        Spinner spinner = new Spinner(s);
        spinner.start();
        Thread.sleep(500);
        s.plain = 12345;
        s.go = true;

        Checks c = new Checks("VolatileSpin");
        long deadline = System.nanoTime() + LIMIT_NANOS;
        long expectedSum = 0;
        handoff:
        for (int i = 1; i <= ROUNDS; i++) {
            s.value = valueOf(i);
            expectedSum += valueOf(i);
            s.turn = 2 * i - 1;
            while (s.turn != 2 * i) {
                if (System.nanoTime() > deadline || !spinner.isAlive()) {
                    if (s.turn == 2 * i) {
                        break; // the spinner acknowledged this round and then ended
                    }
                    c.fail("main gave up waiting for turn " + 2 * i + " (turn " + s.turn + ", spinner alive "
                            + spinner.isAlive() + ")");
                    break handoff;
                }
            }
            if (s.reply != valueOf(i) + 1) {
                c.fail("round " + i + ": reply " + s.reply + ", expected " + (valueOf(i) + 1));
            }
        }
        spinner.join(LIMIT_NANOS / 1_000_000);
        c.check(!spinner.isAlive(), "spinner still alive after join(30 s)");
        c.check(!spinner.timedOut, "spinner never saw go == true within 30 s (" + spinner.spins + " spins)");
        c.equal("plain field written before the volatile go, read by the spinner", spinner.plainSeen, 12345);
        c.check(spinner.error == null, "spinner: " + spinner.error);
        c.equal("sum of the values handed over", spinner.sumSeen, expectedSum);
        c.done();
    }
}
