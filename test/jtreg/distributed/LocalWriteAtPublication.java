/*
 * @test
 * @summary A local array written by one long System.arraycopy while a thread on a thread
 *          server makes it shared (reading the holder it was just stored into sends the
 *          holder's bytes away, and with them the array's id) and fetches it: the reader sees
 *          every element the copy wrote, in both ways the copy can straddle the publication.
 *          Odd rounds copy from a local source; the copy stalls (-XX:DjavaStressLocalWriteMillis)
 *          after finding both arrays local, as a descheduled thread would, and the array's
 *          first flush must wait for a fence with every thread of the launcher. Even rounds
 *          copy from a shared source the reader wrote last, so the copy first waits for its
 *          bytes, and the array, local when the copy began, must be looked at again once they
 *          are here. Without the fence, or without that second look, the reader kept a copy of
 *          the array from before the copy and was never told of it.
 * @library /lib
 * @run main/othervm -XX:+UnlockDiagnosticVMOptions -XX:DjavaStressLocalWriteMillis=30
 *      LocalWriteAtPublication
 */
import java.util.Arrays;

public class LocalWriteAtPublication {
    static final int ROUNDS = 12;
    static final int LENGTH = 2 << 20;  // 8 MB of ints: each fetch takes milliseconds

    static final class Holder {
        volatile int[] array;
        volatile int[] sharedSource;
        volatile int filled;   // the round whose copy is done
        volatile int checked;  // the round the reader has checked
        volatile String failure;
    }

    public static void main(String[] args) throws Exception {
        Checks checks = new Checks("LocalWriteAtPublication");
        Holder holder = new Holder();
        holder.sharedSource = new int[LENGTH];
        Thread reader = new Thread(() -> {
            int[] fill = new int[LENGTH];
            int[] last = null;
            for (int round = 1; round <= ROUNDS && holder.failure == null; round++) {
                int[] array;
                while ((array = holder.array) == null || array == last) {
                    Thread.onSpinWait();
                }
                last = array;
                int early = array[LENGTH - 1];  // fetched now: during the copy, most rounds
                while (holder.filled != round) {
                    Thread.onSpinWait();
                }
                for (int i = 0; i < LENGTH; i += 4093) {
                    if (array[i] != round) {
                        holder.failure = "round " + round + ": element " + i + " is " + array[i]
                                + " (the last element read " + early + " during the copy)";
                        break;
                    }
                }
                if (holder.failure == null && array[LENGTH - 1] != round) {
                    holder.failure = "round " + round + ": the last element is "
                            + array[LENGTH - 1];
                }
                if (round % 2 == 1) {
                    // The next round's source: modified here, so the launcher must fetch it.
                    Arrays.fill(fill, round + 1);
                    System.arraycopy(fill, 0, holder.sharedSource, 0, LENGTH);
                }
                holder.checked = round;
            }
        }, "reader");
        reader.start();
        int[] localSource = new int[LENGTH];
        for (int round = 1; round <= ROUNDS && holder.failure == null; round++) {
            int[] source = holder.sharedSource;
            if (round % 2 == 1) {
                Arrays.fill(localSource, round);
                source = localSource;
            }
            int[] array = new int[LENGTH];
            holder.array = array;
            System.arraycopy(source, 0, array, 0, LENGTH);
            holder.filled = round;
            while (holder.checked != round && holder.failure == null) {
                Thread.onSpinWait();
            }
        }
        reader.join();
        if (holder.failure != null) {
            checks.fail(holder.failure);
        }
        checks.equal("rounds checked", holder.checked, ROUNDS);
        checks.done();
        System.out.println("LocalWriteAtPublication: ok");
    }
}
