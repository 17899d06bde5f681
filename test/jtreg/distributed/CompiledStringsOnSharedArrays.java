/*
 * @test
 * @summary String's and arrays' intrinsics in hot, compiled code read shared arrays coherently:
 *          a writer thread refills shared char[] and byte[] arrays and two StringBuilders
 *          (Latin-1 and UTF-16) each round and publishes the round through a volatile field;
 *          reader threads on the other servers, whose check method the JIT compiled on local
 *          arrays first, build Strings from the shared arrays, compare them with
 *          Arrays.equals and search the builders, and must see every round's contents.
 * @library /lib
 * @run main/othervm CompiledStringsOnSharedArrays
 */
import java.util.Arrays;

public class CompiledStringsOnSharedArrays {
    static final int READERS = 2;
    static final int ROUNDS = 40;
    static final int WARM_UP = 40_000;  // past C2's thresholds, tiered or alone
    static final int LENGTH = 48;

    static final class Shared {
        final char[] chars = new char[LENGTH];
        final char[] wide = new char[LENGTH];
        final byte[] bytes = new byte[LENGTH];
        final StringBuilder latin1 = new StringBuilder();
        final StringBuilder utf16 = new StringBuilder();
    }

    static char letter(int round, int i) {
        return (char) ('a' + (round * 7 + i) % 26);
    }

    static String marker(int round) {
        return "round-" + round + ";";
    }

    static void fill(Shared s, int round) {
        for (int i = 0; i < LENGTH; i++) {
            s.chars[i] = letter(round, i);
            s.wide[i] = i == LENGTH / 2 ? '\u20ac' : letter(round, i + 1);
            s.bytes[i] = (byte) letter(round, i + 2);
        }
        s.latin1.setLength(0);
        s.latin1.append("filler-").append(round % 5 == 0 ? "long-filler-" : "").append(marker(round));
        s.utf16.setLength(0);
        s.utf16.append("\u20ac-").append(marker(round)).append(letter(round, 3));
    }

    // What a reader checks, compiled by the JIT: null when the arrays and
    // builders hold round's contents.
    static String check(Shared s, int round, char[] expectChars, byte[] expectBytes) {
        String text = new String(s.chars);                 // compress (char[] -> Latin-1)
        if (!text.equals(new String(expectChars))) {        // equals on local Strings
            return "new String(chars) is " + text;
        }
        if (!Arrays.equals(s.chars, expectChars)) {         // Arrays.equals(char[], char[])
            return "Arrays.equals(chars) is false";
        }
        if (!Arrays.equals(s.bytes, expectBytes)) {         // Arrays.equals(byte[], byte[])
            return "Arrays.equals(bytes) is false: " + Arrays.toString(s.bytes);
        }
        String wide = new String(s.wide);                   // toBytes (char[] -> UTF-16)
        if (wide.indexOf('\u20ac') != LENGTH / 2 || wide.charAt(0) != letter(round, 1)) {
            return "new String(wide) is " + wide;
        }
        String marker = marker(round);
        int at = s.latin1.indexOf(marker);                   // indexOf on the builder's array
        int expectAt = round % 5 == 0 ? "filler-long-filler-".length() : "filler-".length();
        if (at != expectAt) {
            return "latin1.indexOf(" + marker + ") is " + at + " in " + s.latin1;
        }
        if (s.utf16.indexOf(marker) != 2 || s.utf16.charAt(0) != '\u20ac'  // UTF-16 indexOf, getChar
                || s.utf16.charAt(2 + marker.length()) != letter(round, 3)) {
            return "utf16 is " + s.utf16;
        }
        if (s.latin1.toString().compareTo("filler-") <= 0) {  // compareTo
            return "latin1.compareTo is wrong for " + s.latin1;
        }
        return null;
    }

    static char[] expectedChars(int round) {
        char[] c = new char[LENGTH];
        for (int i = 0; i < LENGTH; i++) {
            c[i] = letter(round, i);
        }
        return c;
    }

    static byte[] expectedBytes(int round) {
        byte[] b = new byte[LENGTH];
        for (int i = 0; i < LENGTH; i++) {
            b[i] = (byte) letter(round, i + 2);
        }
        return b;
    }

    public static void main(String[] args) throws Exception {
        Shared shared = new Shared();
        fill(shared, 0);
        Checks c = new Checks("CompiledStringsOnSharedArrays");
        Rounds.run(c, READERS, ROUNDS, 100, new Rounds.Reader() {
            public String warmUp(int reader) {
                // The same check, made hot on objects of this thread's own.
                Shared mine = new Shared();
                for (int i = 0; i < WARM_UP; i++) {
                    int r = i % 10;
                    fill(mine, r);
                    String wrong = CompiledStringsOnSharedArrays.check(mine, r, expectedChars(r),
                                                                       expectedBytes(r));
                    if (wrong != null) {
                        return "local round " + r + ": " + wrong;
                    }
                }
                return null;
            }

            public String check(int reader, int round) {
                return CompiledStringsOnSharedArrays.check(shared, round, expectedChars(round),
                                                           expectedBytes(round));
            }
        }, round -> {
            if (round <= ROUNDS) {
                fill(shared, round);
            }
            return null;
        });
        c.done();
    }
}
