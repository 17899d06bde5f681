// Starting a thread on a thread server, seen from the starting program: the
// time from Thread.start() of a trivial thread until this node sees that it
// has run (its write to a shared flag: this node then reads the flag's new
// bytes, a miss), and Thread.start() followed by join() (which watches the
// Thread's shared alive marker). bench/micro/latency.py runs it (docs/BENCHMARKS.md has the thread
// manager's own part, submit to assignment).
//
//   DJAVA_THREAD_SERVERS=2 build/bin/djava -cp CLASSES ThreadStart STARTS WARMUP
//
// prints "thread start X us" and "thread start+join X us", STARTS of each
// (alternating), after WARMUP of each untimed (class loading on the servers).
import djava.runtime.Node;
import java.util.concurrent.locks.LockSupport;

public class ThreadStart {
    static final class Flag {
        volatile int ran;
        volatile String node;
    }

    static final class Trivial extends Thread {
        final Flag flag;

        Trivial(Flag flag) {
            this.flag = flag;
        }

        @Override
        public void run() {
            flag.node = Node.nodeName();
            flag.ran = 1;
        }
    }

    public static void main(String[] args) throws Exception {
        int starts = Integer.parseInt(args[0]);
        int warmup = Integer.parseInt(args[1]);
        String here = Node.nodeName();
        for (int k = 0; k < warmup + starts; k++) {
            Flag flag = new Flag();
            Thread t = new Trivial(flag);
            long t0 = System.nanoTime();
            t.start();
            while (flag.ran == 0) {
                // A read of this node's copy until the thread's write takes it; the
                // pause leaves the cores to the servers (a yield loop is slower here).
                LockSupport.parkNanos(20_000);
            }
            long ran = System.nanoTime() - t0;
            t.join();
            if (flag.node.equals(here)) {
                throw new AssertionError("the thread ran on this node, " + here);
            }

            Thread u = new Trivial(new Flag());
            t0 = System.nanoTime();
            u.start();
            u.join();
            long joined = System.nanoTime() - t0;
            if (k >= warmup) {
                System.out.printf("thread start %.2f us%n", ran / 1e3);
                System.out.printf("thread start+join %.2f us%n", joined / 1e3);
            }
        }
    }
}
