// Accesses to an array kept in blocks (issue 19) against the same loop on a
// local array, for bench/micro/blocks.py: an int[] of 64 Ki elements (32
// blocks of 8 KiB, by default) written and read in a sequential loop,
//
//   local   never escapes (the mark test only);
//   cached  shared, every block here: in M for the write loop (this node
//           published it), in S for the read loop (a thread on a thread
//           server read it since);
//   whole   the same loops on a shared int[1000], kept whole (Table 6's
//           array rows' kind), for comparison.
//
//   DJAVA_THREAD_SERVERS=2 build/bin/djava -cp CLASSES BlockArrayMicro ITERATIONS
//
// Prints "row column ns" lines: ns per loop iteration.
import djava.runtime.Node;

public class BlockArrayMicro {
    static final int BLOCKED = 64 * 1024;
    static final int WHOLE = 1000;
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        int[] local = new int[BLOCKED];
        int[] shared = new int[BLOCKED];
        int[] whole = new int[WHOLE];
        Node.publish(shared);
        Node.publish(whole);
        for (int warm = 0; warm < 3; warm++) {
            write(local, n / 10);
            write(shared, n / 10);
            write(whole, n / 10);
        }
        report("int-array-write", "local", write(local, n));
        report("int-array-write", "cached", write(shared, n));
        report("int-array-write", "whole", write(whole, n));
        readElsewhere(shared, whole);
        Thread.sleep(200);
        for (int warm = 0; warm < 3; warm++) {
            read(local, n / 10);
            read(shared, n / 10);
            read(whole, n / 10);
        }
        report("int-array-read", "local", read(local, n));
        report("int-array-read", "cached", read(shared, n));
        report("int-array-read", "whole", read(whole, n));
    }

    static double write(int[] a, int n) {
        int length = a.length;
        long t = System.nanoTime();
        for (int i = 0, j = 0; i < n; i++) {
            a[j] = i;
            if (++j == length) {
                j = 0;
            }
        }
        return (System.nanoTime() - t) / (double) n;
    }

    static double read(int[] a, int n) {
        int length = a.length;
        long s = 0;
        long t = System.nanoTime();
        for (int i = 0, j = 0; i < n; i++) {
            s += a[j];
            if (++j == length) {
                j = 0;
            }
        }
        double ns = (System.nanoTime() - t) / (double) n;
        sink += s;
        return ns;
    }

    /** A thread on a thread server reads every element: this node keeps S copies. */
    static void readElsewhere(int[] shared, int[] whole) throws InterruptedException {
        String[] node = new String[1];
        Thread reader = new Thread(() -> {
            node[0] = Node.nodeName();
            long s = 0;
            for (int v : shared) s += v;
            for (int v : whole) s += v;
            sink += s;
        });
        reader.start();
        reader.join();
        if (node[0].equals(Node.nodeName())) {
            throw new AssertionError("the reader ran on this node, " + node[0]);
        }
    }

    static void report(String row, String column, double ns) {
        System.out.printf("%s %s %.4f%n", row, column, ns);
    }
}
