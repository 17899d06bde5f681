/*
 * @test
 * @summary The default maximum heap follows java's ergonomics (a quarter of the host's RAM) on
 *          the launcher and on a thread server: a program that keeps 1 GiB of arrays runs there
 *          without -Xmx, as it does on java (Zero's own default was 256 MB).
 * @library /lib
 * @run main/othervm DefaultHeapHoldsAGigabyte
 */
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

public class DefaultHeapHoldsAGigabyte {
    static final int MIB = 1 << 20;
    static final int KEPT_MIB = 1024;

    /** Keeps 1 GiB of 1 MiB arrays, touching each; returns the sum of one byte of each. */
    static long keepAGigabyte() {
        List<byte[]> kept = new ArrayList<>();
        for (int i = 0; i < KEPT_MIB; i++) {
            byte[] b = new byte[MIB];
            b[i % MIB] = 1;
            b[MIB - 1] = 1;
            kept.add(b);
        }
        long sum = 0;
        for (int i = 0; i < kept.size(); i++) {
            sum += kept.get(i)[i % MIB];
        }
        return sum;
    }

    public static void main(String[] args) throws Exception {
        long ram = ((com.sun.management.OperatingSystemMXBean)
                ManagementFactory.getOperatingSystemMXBean()).getTotalMemorySize();
        if (ram / 4 < (KEPT_MIB + 256L) * MIB) {
            System.out.println("skipped: a quarter of this host's RAM (" + ram / 4 / MIB
                    + " MiB) would not hold 1 GiB on java either");
            return;
        }
        Checks c = new Checks("DefaultHeapHoldsAGigabyte");
        long max = Runtime.getRuntime().maxMemory();
        c.check(max >= ram / 4 * 9 / 10, "the launcher's max heap is " + max / MIB
                + " MiB, less than about a quarter of " + ram / MIB + " MiB");
        c.equal("1 GiB kept on main", keepAGigabyte(), KEPT_MIB);
        long[] remote = new long[2];
        Thread t = new Thread(() -> {
            remote[0] = Runtime.getRuntime().maxMemory();
            remote[1] = keepAGigabyte();
        });
        Threads.startAll(t);
        Threads.joinAll(t);
        c.check(remote[0] >= ram / 4 * 9 / 10, "a thread server's max heap is " + remote[0] / MIB + " MiB");
        c.equal("1 GiB kept on a thread server", remote[1], KEPT_MIB);
        c.done();
    }
}
