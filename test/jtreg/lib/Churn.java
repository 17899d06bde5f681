/**
 * Short-lived garbage, so that collections (frequent with -Xmn2m) move objects while threads
 * share them. Everything allocated stays local to the calling thread; the checksum keeps the
 * work observable.
 */
public final class Churn {
    private Churn() {
    }

    /** Allocates about {@code objects} small objects and arrays and drops them. */
    public static long garbage(int objects) {
        long sum = 0;
        Object[] keep = new Object[8];
        for (int i = 0; i < objects; i++) {
            byte[] b = new byte[32 + (i & 127)];
            b[b.length - 1] = (byte) i;
            keep[i & 7] = (i & 1) == 0 ? b : Integer.toString(i);
            sum += b.length + b[b.length - 1];
        }
        return sum + keep.length;
    }
}
