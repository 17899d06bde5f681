import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CyclicBarrier;

/**
 * What a shared array in blocks costs the memory of a node that uses few of
 * its blocks (issue 19). main makes a byte[] of MiB mebibytes and fills it;
 * each of two threads (one per thread server) then reads and writes BLOCKS
 * scattered blocks of its half, so its server holds a replica of the whole
 * array but uses BLOCKS blocks of it. Each thread reports its own process's
 * resident memory (VmRSS: the thread runs in the thread server's JVM) before
 * it first touches the array, after its blocks, and after two full GCs on
 * its server (which move the replica) and a pause for the reclaim thread.
 * main then checks every value the threads wrote and that the rest is
 * unchanged.
 *
 * Prints lines "rss <thread> <stage> <KiB>", then "ok".
 *
 * usage: BlockArrayMemory MiB BLOCKS
 */
public class BlockArrayMemory {
    static final int BLOCK = 8192;

    static long rssKiB() throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IllegalStateException("no VmRSS in /proc/self/status");
    }

    static byte initial(long i) {
        return (byte) (i * 31 + 7);
    }

    public static void main(String[] args) throws Exception {
        int mib = Integer.parseInt(args[0]);
        int blocks = Integer.parseInt(args[1]);
        byte[] a = new byte[mib << 20];
        for (int i = 0; i < a.length; i++) {
            a[i] = initial(i);
        }
        int half = a.length / 2;
        int stride = half / BLOCK / blocks * BLOCK;
        String[] report = new String[2];
        CyclicBarrier measured = new CyclicBarrier(2);
        Thread[] threads = new Thread[2];
        for (int t = 0; t < 2; t++) {
            final int k = t;
            threads[t] = new Thread(() -> {
                try {
                    StringBuilder out = new StringBuilder();
                    // Both before either touches the array: each server's own baseline.
                    long before = rssKiB();
                    measured.await();
                    long sum = 0;
                    for (int b = 0; b < blocks; b++) {
                        int at = k * half + b * stride + 5;
                        sum += a[at];
                        a[at + 1] = (byte) (k + b);
                    }
                    long touched = rssKiB();
                    System.gc();
                    System.gc();
                    Thread.sleep(500);  // the reclaim thread looks every 100 ms
                    long afterGc = rssKiB();
                    // The blocks used stay right after the GCs; one more read each.
                    for (int b = 0; b < blocks; b++) {
                        int at = k * half + b * stride + 5;
                        if (a[at] != initial(at) || a[at + 1] != (byte) (k + b)) {
                            throw new AssertionError("element " + at + " changed");
                        }
                    }
                    out.append("rss ").append(k).append(" before ").append(before).append('\n');
                    out.append("rss ").append(k).append(" touched ").append(touched).append('\n');
                    out.append("rss ").append(k).append(" after-gc ").append(afterGc).append('\n');
                    report[k] = out.toString() + "sum " + k + " " + sum;
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }, "blocks-" + t);
        }
        for (Thread t : threads) {
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        for (int t = 0; t < 2; t++) {
            for (int b = 0; b < blocks; b++) {
                int at = t * half + b * stride + 5;
                if (a[at + 1] != (byte) (t + b)) {
                    throw new AssertionError("write at " + (at + 1) + " lost");
                }
                a[at + 1] = initial(at + 1);
            }
        }
        for (int i = 0; i < a.length; i++) {
            if (a[i] != initial(i)) {
                throw new AssertionError("element " + i + " is " + a[i]);
            }
        }
        for (String r : report) {
            System.out.println(r);
        }
        System.out.println("ok");
    }
}
