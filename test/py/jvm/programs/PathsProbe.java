// Drives one node's side of the VM's runtime paths over shared objects (those
// that are not the bytecode interpreter: Unsafe and what is built on it,
// System.arraycopy, Object.clone, reflection, JNI) from stdin, one command a
// line, one answer a line (test/py/jvm/test_shared_runtime_paths.py runs two
// of these):
//   publish            makes a Root graph shared; "id N"
//   attach N           takes shared object N as the root; "attached CLASS"
//   atomics N          N times: AtomicLong, AtomicInteger and AtomicReference
//                      (a new Cell each time) += 1; "atomics L I R"
//   atomics-threads T N  the same from T threads at once, N times each
//   updaters N         N times: an AtomicIntegerFieldUpdater, a VarHandle on
//                      a long field and one on a long[] element += 1;
//                      "updaters U H S"
//   set-ints K         root.ints[x] = K*10+x by the interpreter; "set K"
//   show-arrays        the arrays as the interpreter reads them
//   copy-out           System.arraycopy from the shared arrays to local ones
//   copy-in K          System.arraycopy from local arrays to the shared ones
//   copy-shared        System.arraycopy between shared arrays, and within one
//   set-box K          root.box's fields by the interpreter; "set K"
//   clone              clones of root.box, root.ints and root.objs
//   reflect-set K      Field.set*, Array.set* on shared objects; "reflected K"
//   reflect-get        Field.get*, Array.get* and Method.invoke (unboxing a
//                      shared Integer), Array.set of it into a local int[]
//   unsafe-set K       sun.misc.Unsafe puts, setMemory, copyMemory into shared
//                      objects, and a swapping copy (a big-endian direct
//                      buffer's bulk get); "unsafe-set K"
//   unsafe-get         sun.misc.Unsafe gets, compareAndSwap and copyMemory out
//                      of them, and a swapping copy out
//   jni-set K          JNI SetIntField, SetIntArrayRegion, SetObjectArrayElement
//   jni-get            JNI GetIntField, GetIntArrayRegion, GetObjectArrayElement
//   jni-add D          adds D to every root.ints element, once through
//                      Get/ReleaseIntArrayElements and once through
//                      Get/ReleasePrimitiveArrayCritical
//   gc                 churns the young generation and collects; "gc"
// A failing command answers "error " and the exception. The JNI commands need
// -Dpaths.jni=<the test's library>.
import djava.runtime.Node;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

public class PathsProbe {
    static final class Cell {
        final int n;
        Cell(int n) { this.n = n; }
        public String toString() { return "cell:" + n; }
    }

    static final class Box implements Cloneable {
        int i; long j; String text; int[] ints; Box other;
        public Box clone() {
            try {
                return (Box) super.clone();
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }
    }

    static final class Root {
        final AtomicLong along = new AtomicLong();
        final AtomicInteger aint = new AtomicInteger();
        final AtomicReference<Cell> aref = new AtomicReference<>(new Cell(0));
        volatile int updated;
        long handled;
        final long[] slots = new long[4];
        int plain; String name; Object ref; Integer boxed = 1000;
        final int[] ints = new int[8];
        final int[] ints2 = new int[8];
        final Object[] objs = new Object[4];
        final Object[] objs2 = new Object[4];
        final byte[] bytes = new byte[16];
        final Box box = new Box();
    }

    static final AtomicIntegerFieldUpdater<Root> UPDATED =
        AtomicIntegerFieldUpdater.newUpdater(Root.class, "updated");
    static final VarHandle HANDLED;
    static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(long[].class);
    static final sun.misc.Unsafe U;
    static final long PLAIN, INT_BASE, BYTE_BASE;

    static {
        try {
            HANDLED = MethodHandles.lookup().findVarHandle(Root.class, "handled", long.class);
            Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            U = (sun.misc.Unsafe) f.get(null);
            PLAIN = U.objectFieldOffset(Root.class.getDeclaredField("plain"));
            INT_BASE = U.arrayBaseOffset(int[].class);
            BYTE_BASE = U.arrayBaseOffset(byte[].class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // The JNI side (test_shared_runtime_paths.py builds it with gcc).
    static native int jniGetInt(Object o);
    static native void jniSetInt(Object o, int value);
    static native int[] jniGetRegion(int[] a, int start, int length);
    static native void jniSetRegion(int[] a, int start, int[] values);
    static native Object jniGetElement(Object[] a, int index);
    static native void jniSetElement(Object[] a, int index, Object value);
    static native void jniAddElements(int[] a, int delta);
    static native void jniAddCritical(int[] a, int delta);

    static Root root;
    static Object sink;

    static int twice(int x) {
        return 2 * x;
    }

    static String compact(Object o) {
        if (o instanceof int[]) return Arrays.toString((int[]) o).replace(" ", "");
        if (o instanceof long[]) return Arrays.toString((long[]) o).replace(" ", "");
        if (o instanceof byte[]) return Arrays.toString((byte[]) o).replace(" ", "");
        if (o instanceof Object[]) {
            StringBuilder sb = new StringBuilder("[");
            for (Object e : (Object[]) o) {
                if (sb.length() > 1) sb.append(',');
                sb.append(e instanceof Integer ? "int:" + e : String.valueOf(e));
            }
            return sb.append(']').toString();
        }
        return String.valueOf(o);
    }

    static String atomics(int n) {
        for (int x = 0; x < n; x++) {
            root.along.incrementAndGet();
            root.aint.getAndIncrement();
            root.aref.updateAndGet(c -> new Cell(c.n + 1));
        }
        return "atomics " + root.along.get() + " " + root.aint.get() + " " + root.aref.get().n;
    }

    static String updaters(int n) {
        for (int x = 0; x < n; x++) {
            UPDATED.incrementAndGet(root);
            HANDLED.getAndAdd(root, 1L);
            long v;
            do {
                v = (long) SLOTS.getVolatile(root.slots, 1);
            } while (!SLOTS.compareAndSet(root.slots, 1, v, v + 1));
        }
        return "updaters " + UPDATED.get(root) + " " + (long) HANDLED.getVolatile(root) + " "
            + (long) SLOTS.getVolatile(root.slots, 1);
    }

    static String run(String[] w) throws Throwable {
        switch (w[0]) {
            case "publish":
                root = new Root();
                return "id " + Node.publish(root);
            case "attach":
                root = (Root) Node.attach(Long.parseLong(w[1]));
                return "attached " + root.getClass().getName();
            case "atomics":
                return atomics(Integer.parseInt(w[1]));
            case "atomics-threads": {
                int threads = Integer.parseInt(w[1]), n = Integer.parseInt(w[2]);
                Thread[] ts = new Thread[threads];
                Throwable[] failure = new Throwable[1];
                for (int t = 0; t < threads; t++) {
                    ts[t] = new Thread(() -> {
                        try {
                            atomics(n);
                        } catch (Throwable e) {
                            failure[0] = e;
                        }
                    });
                    ts[t].start();
                }
                for (Thread t : ts) t.join();
                if (failure[0] != null) throw failure[0];
                return atomics(0);
            }
            case "updaters":
                return updaters(Integer.parseInt(w[1]));
            case "set-ints": {
                int k = Integer.parseInt(w[1]);
                for (int x = 0; x < root.ints.length; x++) root.ints[x] = k * 10 + x;
                return "set " + k;
            }
            case "show-arrays":
                return "ints=" + compact(root.ints) + " ints2=" + compact(root.ints2)
                    + " objs=" + compact(root.objs) + " objs2=" + compact(root.objs2);
            case "copy-out": {
                int[] ints = new int[8];
                Object[] objs = new Object[4];
                System.arraycopy(root.ints, 0, ints, 0, 8);
                System.arraycopy(root.objs, 0, objs, 0, 4);
                int[] tail = Arrays.copyOfRange(root.ints, 6, 8);  // arraycopy too
                return "out ints=" + compact(ints) + " objs=" + compact(objs) + " tail=" + compact(tail)
                    + " local=" + (Node.idOf(ints) == 0 && Node.idOf(objs) == 0);
            }
            case "copy-in": {
                int k = Integer.parseInt(w[1]);
                int[] ints = new int[8];
                for (int x = 0; x < 8; x++) ints[x] = k * 100 + x;
                Object[] objs = {"s" + k, new Cell(k), null, Integer.valueOf(5000 + k)};
                System.arraycopy(ints, 0, root.ints, 0, 8);
                System.arraycopy(objs, 0, root.objs, 0, 4);
                return "copied-in " + k;
            }
            case "copy-shared":
                System.arraycopy(root.ints, 0, root.ints2, 0, 8);
                System.arraycopy(root.objs, 0, root.objs2, 0, 4);
                System.arraycopy(root.ints2, 0, root.ints2, 1, 7);  // one array, overlapping
                System.arraycopy(root.objs2, 1, root.objs2, 0, 3);
                return "copied-shared";
            case "set-box": {
                int k = Integer.parseInt(w[1]);
                root.box.i = k;
                root.box.j = ((long) k) << 33;
                root.box.text = "b" + k;
                root.box.ints = root.ints;
                root.box.other = root.box;
                return "set " + k;
            }
            case "clone": {
                Box c = root.box.clone();
                int[] ints = root.ints.clone();
                Object[] objs = root.objs.clone();
                return "clone i=" + c.i + " j=" + c.j + " text=" + c.text
                    + " same-ints=" + (c.ints == root.ints) + " same-other=" + (c.other == root.box)
                    + " ints=" + compact(ints) + " objs=" + compact(objs)
                    + " local=" + (Node.idOf(c) == 0 && Node.idOf(ints) == 0 && Node.idOf(objs) == 0)
                    + " shared=" + (Node.idOf(root.box) != 0);
            }
            case "reflect-set": {
                int k = Integer.parseInt(w[1]);
                Root.class.getDeclaredField("plain").setInt(root, k);
                Root.class.getDeclaredField("name").set(root, "n" + k);
                Root.class.getDeclaredField("ref").set(root, new Cell(k));
                Root.class.getDeclaredField("boxed").set(root, Integer.valueOf(1000 + k));
                Field updated = Root.class.getDeclaredField("updated");  // volatile
                updated.setInt(root, updated.getInt(root) + k);
                Array.setInt(root.ints, 2, k);
                Array.set(root.ints, 3, Integer.valueOf(k + 1));  // unboxed by the VM
                Array.set(root.objs, 1, "a" + k);
                return "reflected " + k;
            }
            case "reflect-get": {
                Method twice = PathsProbe.class.getDeclaredMethod("twice", int.class);
                // A shared box, fetched first, unboxed into a local array.
                int[] local = new int[1];
                Array.set(local, 0, root.boxed);
                return "reflect plain=" + Root.class.getDeclaredField("plain").getInt(root)
                    + " local-set=" + local[0]
                    + " name=" + Root.class.getDeclaredField("name").get(root)
                    + " ref=" + Root.class.getDeclaredField("ref").get(root)
                    + " boxed=" + Root.class.getDeclaredField("boxed").get(root)
                    + " updated=" + Root.class.getDeclaredField("updated").getInt(root)
                    + " ints2=" + Array.getInt(root.ints, 2) + " ints3=" + Array.get(root.ints, 3)
                    + " objs1=" + Array.get(root.objs, 1)
                    + " invoke=" + twice.invoke(null, root.boxed)
                    + " boxed-shared=" + (Node.idOf(root.boxed) != 0);
            }
            case "unsafe-set": {
                int k = Integer.parseInt(w[1]);
                U.putInt(root, PLAIN, k);
                U.putIntVolatile(root.ints, INT_BASE + 4 * 5, k + 5);
                U.putOrderedInt(root.ints, INT_BASE + 4 * 6, k + 6);
                U.setMemory(root.bytes, BYTE_BASE, 8, (byte) k);
                byte[] local = new byte[8];
                for (int x = 0; x < 8; x++) local[x] = (byte) (k + x);
                U.copyMemory(local, BYTE_BASE, root.bytes, BYTE_BASE + 8, 8);
                // A big-endian direct buffer's bulk get swaps bytes into the
                // array: Unsafe.copySwapMemory.
                ByteBuffer big = ByteBuffer.allocateDirect(8).order(ByteOrder.BIG_ENDIAN);
                big.putInt(0, k + 7).putInt(4, k + 8);
                big.asIntBuffer().get(root.ints, 0, 2);
                return "unsafe-set " + k;
            }
            case "unsafe-get": {
                byte[] local = new byte[16];
                U.copyMemory(root.bytes, BYTE_BASE, local, BYTE_BASE, 16);
                int[] both = new int[8];
                U.copyMemory(root.ints, INT_BASE, root.ints2, INT_BASE, 32);  // shared to shared
                U.copyMemory(root.ints2, INT_BASE, both, INT_BASE, 32);
                IntBuffer big = ByteBuffer.allocateDirect(8).order(ByteOrder.BIG_ENDIAN).asIntBuffer();
                big.put(root.ints, 0, 2);  // swapped out of the array
                int plain = U.getInt(root, PLAIN);
                boolean cas = U.compareAndSwapInt(root, PLAIN, plain, plain + 1);
                return "unsafe plain=" + plain + " ints5=" + U.getIntVolatile(root.ints, INT_BASE + 4 * 5)
                    + " ints6=" + U.getInt(root.ints, INT_BASE + 4 * 6) + " bytes=" + compact(local)
                    + " ints2=" + compact(both) + " cas=" + cas + " after=" + U.getIntVolatile(root, PLAIN)
                    + " swapped=[" + big.get(0) + "," + big.get(1) + "]";
            }
            case "jni-set": {
                int k = Integer.parseInt(w[1]);
                jniSetInt(root, k);
                jniSetRegion(root.ints, 4, new int[] {k, k + 1, k + 2});
                jniSetElement(root.objs, 2, new Cell(k));
                return "jni-set " + k;
            }
            case "jni-get":
                return "jni plain=" + jniGetInt(root) + " region=" + compact(jniGetRegion(root.ints, 3, 5))
                    + " objs2=" + jniGetElement(root.objs, 2);
            case "jni-add": {
                int d = Integer.parseInt(w[1]);
                jniAddElements(root.ints, d);
                jniAddCritical(root.ints, d);
                return "jni-added " + d;
            }
            case "gc":
                for (int x = 0; x < 200_000; x++) sink = new long[16];
                System.gc();
                return "gc";
            default:
                return "unknown command " + w[0];
        }
    }

    public static void main(String[] args) throws Exception {
        String jni = System.getProperty("paths.jni");
        if (jni != null) System.load(jni);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            String answer;
            try {
                answer = run(line.trim().split(" "));
            } catch (Throwable t) {
                Throwable cause = t instanceof java.lang.reflect.InvocationTargetException ? t.getCause() : t;
                answer = "error " + cause;
            }
            System.out.println(answer);
            System.out.flush();
        }
    }
}
