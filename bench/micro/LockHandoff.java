// A shared monitor handed between two nodes: two threads, each on its own
// thread server, take turns strictly (a turn field in the monitor's object,
// wait/notifyAll), so every turn moves the monitor, and the turn field
// with it, from one node to the other. Prints the microseconds per hand-off
// (bench/micro/latency.py; docs/BENCHMARKS.md has the monitor service's own
// hand-off, through its C ABI, for comparison).
//
//   DJAVA_THREAD_SERVERS=2 build/bin/djava -cp CLASSES LockHandoff TURNS WARMUP
//
// prints "lock hand-off X us": side 0's time from its turn WARMUP to its
// last turn, over the hand-offs between them (two per turn of side 0).
import djava.runtime.Node;

public class LockHandoff {
    static final class Baton {
        int turn;            // whose turn: 0 or 1
        long start, end;     // side 0's clock at its turns WARMUP and TURNS-1
        String[] nodes = new String[2];
    }

    public static void main(String[] args) throws Exception {
        int turns = Integer.parseInt(args[0]);
        int warmup = Integer.parseInt(args[1]);
        if (warmup < 0 || warmup >= turns - 1) {
            throw new IllegalArgumentException("need 0 <= WARMUP < TURNS - 1");
        }
        Baton baton = new Baton();
        Thread[] sides = new Thread[2];
        for (int side = 0; side < 2; side++) {
            int me = side;
            // The first side plays (waits) while the second starts: the
            // thread manager places it on the other server.
            sides[side] = new Thread(() -> play(baton, me, turns, warmup));
            sides[side].start();
        }
        for (Thread t : sides) t.join();
        synchronized (baton) {
            if (baton.nodes[0].equals(baton.nodes[1])) {
                throw new AssertionError("both sides ran on " + baton.nodes[0]);
            }
            double handoffs = 2.0 * (turns - 1 - warmup);
            System.out.printf("lock hand-off %.2f us%n", (baton.end - baton.start) / 1e3 / handoffs);
        }
    }

    static void play(Baton baton, int me, int turns, int warmup) {
        String node = Node.nodeName();
        for (int k = 0; k < turns; k++) {
            synchronized (baton) {
                while (baton.turn != me) {
                    try {
                        baton.wait();
                    } catch (InterruptedException e) {
                        throw new AssertionError(e);
                    }
                }
                if (k == 0) baton.nodes[me] = node;
                if (me == 0 && k == warmup) baton.start = System.nanoTime();
                if (me == 0 && k == turns - 1) baton.end = System.nanoTime();
                baton.turn = 1 - me;
                baton.notifyAll();
            }
        }
    }
}
