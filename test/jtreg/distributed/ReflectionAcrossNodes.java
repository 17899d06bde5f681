/*
 * @test
 * @summary Reflection objects a program keeps in its statics and in shared objects work in
 *          threads on every node (issue 25): a Field read and written, a private field of
 *          another class made accessible with setAccessible(true) (which travels with it),
 *          a static and an overloaded instance Method, a Method of the JDK and a Constructor,
 *          used by workers on thread servers; a Field found again there equals the one that
 *          arrived.
 * @library /lib
 * @run main/othervm ReflectionAcrossNodes
 */
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;

public class ReflectionAcrossNodes {
    static final int THREADS = 4;
    static final int ROUNDS = 200;

    static final Field COUNT;
    static final Field SECRET;  // private to Vault, another class: accessible only by setAccessible
    static final Method ADD;
    static final Method TWICE;
    static final Method TWICE_OF;
    static final Method LENGTH;
    static final Constructor<Box> MAKE_BOX;
    static final long DEFINING_PID = ProcessHandle.current().pid();  // where they were made

    static {
        try {
            COUNT = Counters.class.getField("count");
            SECRET = Vault.class.getDeclaredField("secret");
            SECRET.setAccessible(true);
            ADD = ReflectionAcrossNodes.class.getDeclaredMethod("add", int.class, int.class);
            TWICE = Box.class.getDeclaredMethod("twice");
            TWICE_OF = Box.class.getDeclaredMethod("twice", int.class);
            LENGTH = String.class.getMethod("length");
            MAKE_BOX = Box.class.getDeclaredConstructor(int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    public static final class Counters {
        public int count;
    }

    static final class Box {
        final int value;

        Box(int value) {
            this.value = value;
        }

        int twice() {
            return 2 * value;
        }

        int twice(int x) {
            return 2 * x;
        }
    }

    /** Reflection objects in a shared object's fields, not only in statics. */
    static final class Members {
        Field field;
        Method method;
    }

    static int add(int a, int b) {
        return a + b;
    }

    public static void main(String[] args) throws Throwable {
        Counters counters = new Counters();
        Vault vault = new Vault(7);
        Members members = new Members();
        members.field = Vault.class.getDeclaredField("secret");  // not accessible
        members.method = ADD;
        long[] pids = new long[THREADS];
        String[] refused = new String[THREADS];
        Throwable[] failure = new Throwable[1];
        Thread[] workers = new Thread[THREADS];
        for (int i = 0; i < THREADS; i++) {
            final int slot = i;
            workers[i] = new Thread(() -> {
                try {
                    pids[slot] = ProcessHandle.current().pid();
                    for (int r = 0; r < ROUNDS; r++) {
                        synchronized (counters) {
                            COUNT.setInt(counters, COUNT.getInt(counters) + 1);
                        }
                        int sum = (int) ADD.invoke(null, r, 1);
                        Box box = MAKE_BOX.newInstance(r);
                        int doubled = (int) TWICE.invoke(box);
                        int doubledOf = (int) TWICE_OF.invoke(box, r + 1);
                        int secret = SECRET.getInt(vault);
                        int length = (int) LENGTH.invoke("worker " + slot);
                        int three = (int) members.method.invoke(null, 1, 2);
                        if (sum != r + 1 || doubled != 2 * r || doubledOf != 2 * (r + 1) || secret != 7
                                || length != 8 || three != 3) {
                            throw new AssertionError("round " + r + ": " + sum + " " + doubled + " "
                                    + doubledOf + " " + secret + " " + length + " " + three);
                        }
                    }
                    if (!COUNT.equals(Counters.class.getField("count"))) {
                        throw new AssertionError("a Field that arrived is not the field: " + COUNT);
                    }
                    try {
                        members.field.getInt(vault);
                        refused[slot] = "no: it read the private field";
                    } catch (IllegalAccessException expected) {
                        refused[slot] = "yes";
                    }
                } catch (Throwable t) {
                    synchronized (failure) {
                        failure[0] = t;
                    }
                }
            }, "worker " + i);
        }
        Threads.startAll(workers);
        Threads.joinAll(workers);
        synchronized (failure) {
            if (failure[0] != null) {
                throw new AssertionError("a worker failed", failure[0]);
            }
        }
        if (counters.count != THREADS * ROUNDS) {
            throw new AssertionError("count " + counters.count + ", expected " + THREADS * ROUNDS);
        }
        boolean elsewhere = false;
        for (int i = 0; i < THREADS; i++) {
            elsewhere |= pids[i] != DEFINING_PID;
            if (!"yes".equals(refused[i])) {
                throw new AssertionError("worker " + i + " was refused the inaccessible field: " + refused[i]);
            }
        }
        if (!elsewhere) {
            throw new AssertionError("every worker ran where the members were made (" + DEFINING_PID + ")");
        }
        System.out.println("ok: " + counters.count + " reflective updates on " + java.util.Arrays.toString(pids));
    }
}

/** A class of its own nest: its private field is reflectively inaccessible to the test's classes. */
class Vault {
    private final int secret;

    Vault(int secret) {
        this.secret = secret;
    }
}
