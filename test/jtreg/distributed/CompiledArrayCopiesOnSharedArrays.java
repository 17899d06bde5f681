/*
 * @test
 * @summary System.arraycopy in hot, compiled code copies from and into shared arrays coherently:
 *          a writer thread refills a shared int[], long[] and Object[] each round and publishes
 *          the round through a volatile field; reader threads on the other servers, whose copy
 *          method the JIT compiled on local arrays first, copy the shared arrays into new local
 *          ones (long copies, and a short one C2 turns into loads and stores) and must see every
 *          round's contents, then copy them on into shared arrays of their own, which the writer
 *          checks.
 * @library /lib
 * @run main/othervm CompiledArrayCopiesOnSharedArrays
 */
import java.util.Arrays;

public class CompiledArrayCopiesOnSharedArrays {
    static final int READERS = 2;
    static final int ROUNDS = 40;
    static final int WARM_UP = 40_000;  // past C2's thresholds, tiered or alone
    static final int INTS = 48;
    static final int LONGS = 600;

    static final class Shared {
        final int[] ints = new int[INTS];
        final long[] longs = new long[LONGS];
        final Object[] refs = new Object[4];
        final int[][] copies = new int[READERS][INTS];  // each reader's, written by it
    }

    static final String[] NAMES = {"north", "east", "south", "west", "up", "down"};

    static void fill(Shared s, int round) {
        for (int i = 0; i < INTS; i++) {
            s.ints[i] = round * 1000 + i;
        }
        for (int i = 0; i < LONGS; i++) {
            s.longs[i] = ((long) round << 32) | i;
        }
        for (int i = 0; i < 4; i++) {
            s.refs[i] = NAMES[(round + i) % NAMES.length];
        }
    }

    // What a reader does, compiled by the JIT: copies the shared arrays into
    // new ones of its own, checks them, and copies the ints into its shared
    // copy. Null when all held round's contents.
    static String copy(Shared s, int k, int round) {
        int[] ints = new int[INTS];
        long[] longs = new long[LONGS];
        Object[] refs = new Object[4];
        System.arraycopy(s.ints, 0, ints, 0, INTS);
        System.arraycopy(s.longs, 0, longs, 0, LONGS);
        System.arraycopy(s.refs, 0, refs, 0, 4);  // short and constant: loads and stores
        for (int i = 0; i < INTS; i++) {
            if (ints[i] != round * 1000 + i) {
                return "ints[" + i + "] is " + ints[i] + ": " + Arrays.toString(ints);
            }
        }
        for (int i = 0; i < LONGS; i += 37) {
            if (longs[i] != (((long) round << 32) | i)) {
                return "longs[" + i + "] is " + Long.toHexString(longs[i]);
            }
        }
        for (int i = 0; i < 4; i++) {
            if (!NAMES[(round + i) % NAMES.length].equals(refs[i])) {
                return "refs is " + Arrays.toString(refs);
            }
        }
        System.arraycopy(ints, 0, s.copies[k], 0, INTS);  // into a shared array
        return null;
    }

    public static void main(String[] args) throws Exception {
        Shared shared = new Shared();
        fill(shared, 0);
        Checks c = new Checks("CompiledArrayCopiesOnSharedArrays");
        Rounds.run(c, READERS, ROUNDS, 100, new Rounds.Reader() {
            public String warmUp(int reader) {
                // The same copies, made hot on arrays of this thread's own.
                Shared mine = new Shared();
                for (int i = 0; i < WARM_UP; i++) {
                    int r = i % 10;
                    fill(mine, r);
                    String wrong = copy(mine, reader, r);
                    if (wrong != null) {
                        return "local round " + r + ": " + wrong;
                    }
                }
                return null;
            }

            public String check(int reader, int round) {
                return copy(shared, reader, round);
            }
        }, round -> {
            for (int k = 0; round > 1 && k < READERS; k++) {
                int[] copied = shared.copies[k];
                for (int i = 0; i < INTS; i++) {
                    if (copied[i] != (round - 1) * 1000 + i) {
                        return "reader " + k + "'s copy is " + Arrays.toString(copied);
                    }
                }
            }
            if (round <= ROUNDS) {
                fill(shared, round);
            }
            return null;
        });
        c.done();
    }
}
