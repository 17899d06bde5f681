/*
 * @test
 * @summary Large arrays kept coherent in blocks (8 KiB of elements each, by default):
 *          threads on both thread servers write disjoint elements of adjacent blocks and
 *          of the same block, a reader races writers under synchronized, System.arraycopy
 *          crosses block edges (within one array, between two shared ones, and between
 *          shared and local ones), Arrays.fill/sort/equals, clone and unaligned
 *          ByteBuffer accesses that straddle two blocks, an Object[] in blocks, JNI's
 *          region functions (file streams) and reflection on arrays in blocks, and a
 *          64 MiB long[] shared and summed by threads on both servers, and replicas that
 *          use a few blocks (the rest of their pages given back) through collections
 *          that move them. Every element is what a single JVM would have.
 * @library /lib
 * @run main/othervm ArrayBlocks
 */
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.lang.reflect.Array;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

public class ArrayBlocks {
    static final int THREADS = 4;
    static final Checks c = new Checks("ArrayBlocks");

    public static void main(String[] args) throws Exception {
        disjointWriters();
        readerRacesWriters();
        copiesAcrossBlockEdges();
        bulkOperations();
        straddlingUnsafeAccesses();
        referencesInBlocks();
        nativeAndReflection();
        largeArraySum();
        sparseReplicasThroughCollections();
        c.done();
    }

    // Thread t writes every element i with i % THREADS == t: all four write every
    // block, interleaved element by element (the same block), and ranges whose edges
    // fall inside blocks (adjacent blocks).
    static void disjointWriters() throws Exception {
        int n = 64 * 1024 + 17;
        int[] interleaved = new int[n];
        long[] ranges = new long[n];
        Thread[] threads = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int k = t;
            threads[t] = new Thread(() -> {
                for (int i = k; i < n; i += THREADS) {
                    interleaved[i] = i * 3 + 1;
                }
                // Ranges of 1000 elements: edges inside blocks of 1024 longs.
                for (int from = k * 1000; from < n; from += THREADS * 1000) {
                    for (int i = from; i < Math.min(n, from + 1000); i++) {
                        ranges[i] = (long) i * i;
                    }
                }
            }, "writer-" + t);
        }
        Threads.startAll(threads);
        Threads.joinAll(threads);
        int bad = 0;
        for (int i = 0; i < n; i++) {
            if ((interleaved[i] != i * 3 + 1 || ranges[i] != (long) i * i) && bad++ < 5) {
                c.fail("element " + i + ": " + interleaved[i] + " / " + ranges[i]);
            }
        }
        c.equal("wrong elements written by disjoint writers", bad, 0);
    }

    // Writers add to pairs of elements in different blocks under one lock; a reader
    // checks under the same lock that each pair moved together.
    static void readerRacesWriters() throws Exception {
        int n = 16 * 1024;
        long[] pairs = new long[n];
        Object lock = new Object();
        int rounds = 300;
        Thread[] writers = new Thread[2];
        for (int t = 0; t < writers.length; t++) {
            final int k = t;
            writers[t] = new Thread(() -> {
                for (int r = 0; r < rounds; r++) {
                    int i = (r * 7919 + k * 104729) % (n / 2);
                    synchronized (lock) {
                        pairs[i] += 1;
                        pairs[n - 1 - i] += 1;
                    }
                }
            }, "pair-writer-" + t);
        }
        long[] torn = new long[1];
        Thread reader = new Thread(() -> {
            for (int r = 0; r < 100; r++) {
                synchronized (lock) {
                    for (int i = 0; i < n / 2; i += 97) {
                        if (pairs[i] != pairs[n - 1 - i]) {
                            torn[0]++;
                        }
                    }
                }
            }
        }, "pair-reader");
        Threads.startAll(writers[0], writers[1], reader);
        Threads.joinAll(writers[0], writers[1], reader);
        c.equal("pairs seen torn under the lock", torn[0], 0);
        long total = 0;
        for (long v : pairs) {
            total += v;
        }
        c.equal("increments", total, 2L * 2 * rounds);
    }

    static int value(int i) {
        return i * 7 - 3;
    }

    static void copiesAcrossBlockEdges() throws Exception {
        int n = 10_000;
        int[] a = new int[n];
        int[] b = new int[n];
        int[][] result = new int[3][];
        Thread t = new Thread(() -> {
            for (int i = 0; i < n; i++) {
                a[i] = value(i);
            }
            // Within one array, overlapping forwards and backwards across blocks.
            System.arraycopy(a, 1000, a, 1003, 5000);
            System.arraycopy(a, 3003, a, 2999, 4000);
            // Between two shared arrays, and into and out of a local one.
            System.arraycopy(a, 0, b, 17, n - 17);
            int[] local = new int[n];
            System.arraycopy(b, 0, local, 0, n);
            result[0] = local;
            int[] source = new int[3000];
            Arrays.fill(source, -5);
            System.arraycopy(source, 0, b, 4000, 3000);
        }, "copier");
        t.start();
        t.join();
        int[] expectA = new int[n];
        for (int i = 0; i < n; i++) {
            expectA[i] = value(i);
        }
        System.arraycopy(expectA, 1000, expectA, 1003, 5000);
        System.arraycopy(expectA, 3003, expectA, 2999, 4000);
        int[] expectB = new int[n];
        System.arraycopy(expectA, 0, expectB, 17, n - 17);
        int[] expectLocal = expectB.clone();
        Arrays.fill(expectB, 4000, 7000, -5);
        c.check(Arrays.equals(a, expectA), "arraycopy within one array in blocks");
        c.check(Arrays.equals(result[0], expectLocal), "arraycopy out of an array in blocks");
        c.check(Arrays.equals(b, expectB), "arraycopy between arrays in blocks");
    }

    static void bulkOperations() throws Exception {
        int n = 20_000;
        double[] d = new double[n];
        boolean[] same = new boolean[1];
        double[][] copy = new double[1][];
        Thread t = new Thread(() -> {
            for (int i = 0; i < n; i++) {
                d[i] = Math.sin(i) * 1000;
            }
            Arrays.sort(d);
            Arrays.fill(d, 100, 9000, 2.5);
            copy[0] = d.clone();
            same[0] = Arrays.equals(d, copy[0]);
        }, "bulk");
        t.start();
        t.join();
        double[] expect = new double[n];
        for (int i = 0; i < n; i++) {
            expect[i] = Math.sin(i) * 1000;
        }
        Arrays.sort(expect);
        Arrays.fill(expect, 100, 9000, 2.5);
        c.check(Arrays.equals(d, expect), "sort and fill of an array in blocks");
        c.check(Arrays.equals(copy[0], expect), "clone of an array in blocks");
        c.check(same[0], "Arrays.equals on a thread server");
    }

    // A ByteBuffer over a shared byte[]: its getLong/putLong at unaligned indexes are
    // Unsafe accesses, some of which straddle two blocks.
    static void straddlingUnsafeAccesses() throws Exception {
        int n = 32 * 1024;
        byte[] bytes = new byte[n];
        Thread[] threads = new Thread[2];
        for (int t = 0; t < threads.length; t++) {
            final int k = t;
            threads[t] = new Thread(() -> {
                ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
                // Thread k writes the longs at 4093 + 16 j + 8 k: across every block edge.
                for (int at = 4093 + 8 * k; at + 8 <= n; at += 16) {
                    buffer.putLong(at, 0x0102030405060708L * (at + 1));
                }
            }, "straddler-" + t);
        }
        Threads.startAll(threads);
        Threads.joinAll(threads);
        ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int bad = 0;
        for (int at = 4093; at + 8 <= n; at += 8) {
            if (buffer.getLong(at) != 0x0102030405060708L * (at + 1) && bad++ < 5) {
                c.fail("long at " + at + ": " + Long.toHexString(buffer.getLong(at)));
            }
        }
        c.equal("unaligned longs across block edges", bad, 0);
    }

    static final class Cell {
        final int value;

        Cell(int value) {
            this.value = value;
        }
    }

    static void referencesInBlocks() throws Exception {
        int n = 12_000;
        Object[] cells = new Object[n];
        Thread[] threads = new Thread[2];
        for (int t = 0; t < threads.length; t++) {
            final int k = t;
            threads[t] = new Thread(() -> {
                for (int i = k; i < n; i += 2) {
                    cells[i] = new Cell(i * 5);
                }
            }, "cells-" + t);
        }
        Threads.startAll(threads);
        Threads.joinAll(threads);
        int bad = 0;
        for (int i = 0; i < n; i++) {
            Object o = cells[i];
            if (!(o instanceof Cell) || ((Cell) o).value != i * 5) {
                if (bad++ < 5) {
                    c.fail("cell " + i + ": " + o);
                }
            }
        }
        c.equal("wrong cells", bad, 0);
    }

    // A thread server writes part of a shared byte[] to a file (JNI's
    // GetByteArrayRegion) and reads it back into another at another offset
    // (SetByteArrayRegion), and sets and gets elements of an int[] by
    // reflection.
    static void nativeAndReflection() throws Exception {
        int n = 100_000;
        byte[] out = new byte[n];
        byte[] in = new byte[n];
        int[] ints = new int[20_000];
        for (int i = 0; i < n; i++) {
            out[i] = (byte) (i * 13 + 1);
        }
        for (int i = 0; i < ints.length; i++) {
            ints[i] = i;
        }
        File file = File.createTempFile("ArrayBlocks", ".bin");
        file.deleteOnExit();
        String path = file.getPath();
        long[] sum = new long[1];
        Thread t = new Thread(() -> {
            try {
                try (FileOutputStream os = new FileOutputStream(path)) {
                    os.write(out, 10_000, 50_000);
                }
                try (FileInputStream is = new FileInputStream(path)) {
                    for (int at = 30_000, r; at < 80_000 && (r = is.read(in, at, 80_000 - at)) > 0; ) {
                        at += r;
                    }
                }
                for (int i = 5_000; i < 15_000; i += 7) {
                    Array.setInt(ints, i, -i);
                }
                long s = 0;
                for (int i = 0; i < ints.length; i += 3) {
                    s += Array.getInt(ints, i);
                }
                sum[0] = s;
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "native");
        t.start();
        t.join();
        int bad = 0;
        for (int i = 0; i < n; i++) {
            byte expect = i >= 30_000 && i < 80_000 ? out[i - 20_000] : 0;
            if (in[i] != expect && bad++ < 5) {
                c.fail("byte " + i + " read back: " + in[i] + ", expected " + expect);
            }
        }
        c.equal("bytes read back wrong", bad, 0);
        long expect = 0;
        for (int i = 0; i < ints.length; i++) {
            int v = i >= 5_000 && i < 15_000 && (i - 5_000) % 7 == 0 ? -i : i;
            if (ints[i] != v && bad++ < 5) {
                c.fail("ints[" + i + "] = " + ints[i] + ", expected " + v);
            }
            expect += i % 3 == 0 ? v : 0;
        }
        c.equal("sum read by reflection", sum[0], expect);
    }

    // 64 MiB: more than a frame may carry, so only blocks can share it.
    static void largeArraySum() throws Exception {
        int n = 8 * 1024 * 1024;
        long[] big = new long[n];
        for (int i = 0; i < n; i++) {
            big[i] = i ^ 0x5555;
        }
        long[] sums = new long[THREADS];
        Thread[] threads = new Thread[THREADS];
        int per = n / THREADS;
        for (int t = 0; t < THREADS; t++) {
            final int k = t;
            threads[t] = new Thread(() -> {
                long s = 0;
                for (int i = k * per; i < (k + 1) * per; i++) {
                    s += big[i];
                }
                sums[k] = s;
                big[k * per] = -1;  // and a write in each quarter
            }, "summer-" + t);
        }
        Threads.startAll(threads);
        Threads.joinAll(threads);
        long expect = 0;
        for (int i = 0; i < n; i++) {
            expect += i ^ 0x5555;
        }
        c.equal("sum of the 64 MiB array", sums[0] + sums[1] + sums[2] + sums[3], expect);
        for (int t = 0; t < THREADS; t++) {
            c.equal("first element of quarter " + t, big[t * per], -1);
        }
    }

    // A thread server's replica gives back the pages of the blocks it has not used,
    // again after each collection that moves it. The blocks it reads and writes must
    // survive both, and blocks it touches later must arrive whole.
    static void sparseReplicasThroughCollections() throws Exception {
        int n = 1 << 20;  // 512 blocks of 2,048 ints
        int block = 2048;
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
            a[i] = value(i);
        }
        int[] wrong = new int[2];
        Thread[] threads = new Thread[2];
        for (int t = 0; t < threads.length; t++) {
            final int k = t;
            threads[t] = new Thread(() -> {
                // Thread k uses every 16th block from block k: reads its middle, writes
                // its last element.
                for (int b = k; b < n / block; b += 16) {
                    if (a[b * block + block / 2] != value(b * block + block / 2)) {
                        wrong[k]++;
                    }
                    a[b * block + block - 1] = -b;
                }
                for (int round = 0; round < 3; round++) {
                    System.gc();
                    try {
                        Thread.sleep(150);  // the reclaim thread looks every 100 ms
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                    for (int b = k; b < n / block; b += 16) {
                        if (a[b * block + block / 2] != value(b * block + block / 2)
                                || a[b * block + block - 1] != -b) {
                            wrong[k]++;
                        }
                    }
                }
                // Then every element of the blocks of this thread's eighth (k = 0: 0-63),
                // but those the other thread writes meanwhile.
                for (int i = k * (n / 8); i < (k + 1) * (n / 8); i++) {
                    if (i % block == block - 1 && (i / block) % 16 == 1 - k) {
                        continue;
                    }
                    int expect = i % block == block - 1 && (i / block) % 16 == k ? -(i / block)
                            : value(i);
                    if (a[i] != expect) {
                        wrong[k]++;
                    }
                }
            }, "sparse-" + t);
        }
        Threads.startAll(threads);
        Threads.joinAll(threads);
        c.equal("wrong elements seen by sparse replicas", wrong[0] + wrong[1], 0);
        int bad = 0;
        for (int i = 0; i < n; i++) {
            int b = i / block;
            int expect = i % block == block - 1 && b % 16 < 2 ? -b : value(i);
            if (a[i] != expect && bad++ < 5) {
                c.fail("element " + i + ": " + a[i] + ", not " + expect);
            }
        }
        c.equal("wrong elements after sparse replicas wrote", bad, 0);
    }
}
