/*
 * @test
 * @summary Dynamic proxies (java.lang.reflect.Proxy) travel between nodes: threads on the
 *          thread servers call a proxy of a public interface, one of a package-private
 *          interface and one of a JDK interface made in the boot loader, all through one
 *          shared handler whose synchronized count is exact; there each proxy's class is a
 *          proxy class of the same interfaces, in the same kind of loader, with the same
 *          identity through two paths; a proxy made on a server and read by main has main's
 *          own proxy class for those interfaces.
 * @library /lib
 * @run main/othervm ProxyObjects
 */
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Arrays;
import java.util.function.IntSupplier;

public class ProxyObjects {
    static final int THREADS = 4;
    static final int CALLS = 500;

    public interface Tally {
        int add(int n);
    }

    interface Secret {
        int peek();
    }

    /** Counts every call through any proxy it handles; add(n) adds n, the others add 1. */
    static final class CountingHandler implements InvocationHandler {
        long total;
        long calls;

        @Override
        public synchronized Object invoke(Object proxy, Method m, Object[] args) {
            calls++;
            switch (m.getName()) {
                case "add":
                    total += (Integer) args[0];
                    return (int) total;
                case "peek":
                case "getAsInt":
                    total += 1;
                    return (int) total;
                case "hashCode":
                    return 7;
                case "equals":
                    return proxy == args[0];
                case "toString":
                    return "proxy of " + Arrays.toString(proxy.getClass().getInterfaces());
                default:
                    throw new UnsupportedOperationException(m.toString());
            }
        }
    }

    static final class Holder {
        Tally tally;
    }

    /** What a thread saw of the proxies where it ran. */
    static final class Seen {
        String tallyInterfaces;
        String secretInterfaces;
        String supplierInterfaces;
        boolean allProxyClasses;
        boolean tallyLoaderIsProgram;
        boolean supplierLoaderIsBoot;
        boolean sameThroughHolder;
        boolean equalsThroughHandler;
        Tally made;
    }

    public static void main(String[] args) throws Exception {
        CountingHandler handler = new CountingHandler();
        ClassLoader app = ProxyObjects.class.getClassLoader();
        Tally tally = (Tally) Proxy.newProxyInstance(app, new Class<?>[] {Tally.class}, handler);
        Secret secret = (Secret) Proxy.newProxyInstance(app, new Class<?>[] {Secret.class}, handler);
        IntSupplier supplier =
            (IntSupplier) Proxy.newProxyInstance(null, new Class<?>[] {IntSupplier.class}, handler);
        Holder holder = new Holder();
        holder.tally = tally;
        Seen[] seen = new Seen[THREADS];
        Thread[] threads = new Thread[THREADS];
        for (int t = 0; t < THREADS; t++) {
            final int k = t;
            threads[t] = new Thread(() -> {
                Seen s = new Seen();
                for (int i = 0; i < CALLS; i++) {
                    tally.add(2);
                    secret.peek();
                    supplier.getAsInt();
                }
                s.tallyInterfaces = Arrays.toString(tally.getClass().getInterfaces());
                s.secretInterfaces = Arrays.toString(secret.getClass().getInterfaces());
                s.supplierInterfaces = Arrays.toString(supplier.getClass().getInterfaces());
                s.allProxyClasses = Proxy.isProxyClass(tally.getClass())
                    && Proxy.isProxyClass(secret.getClass()) && Proxy.isProxyClass(supplier.getClass());
                s.tallyLoaderIsProgram = tally.getClass().getClassLoader() == Tally.class.getClassLoader();
                s.supplierLoaderIsBoot = supplier.getClass().getClassLoader() == null;
                s.sameThroughHolder = holder.tally == tally;
                s.equalsThroughHandler = tally.equals(holder.tally) && tally.hashCode() == 7;
                s.made = (Tally) Proxy.newProxyInstance(Tally.class.getClassLoader(),
                                                        new Class<?>[] {Tally.class}, handler);
                seen[k] = s;
            }, "caller-" + t);
        }
        Threads.startAll(threads);
        Threads.joinAll(threads);

        Checks c = new Checks("ProxyObjects");
        long calls = (long) THREADS * CALLS;
        synchronized (handler) {
            c.equal("the handler's total", handler.total, calls * (2 + 1 + 1));
        }
        String tallyInterfaces = Arrays.toString(new Class<?>[] {Tally.class});
        for (int k = 0; k < THREADS; k++) {
            Seen s = seen[k];
            if (s == null) {
                c.fail("thread " + k + " recorded nothing");
                continue;
            }
            c.equal("thread " + k + ": the Tally proxy's interfaces", s.tallyInterfaces, tallyInterfaces);
            c.equal("thread " + k + ": the Secret proxy's interfaces", s.secretInterfaces,
                    Arrays.toString(new Class<?>[] {Secret.class}));
            c.equal("thread " + k + ": the IntSupplier proxy's interfaces", s.supplierInterfaces,
                    Arrays.toString(new Class<?>[] {IntSupplier.class}));
            c.check(s.allProxyClasses, "thread " + k + ": a proxy's class is not a proxy class there");
            c.check(s.tallyLoaderIsProgram, "thread " + k + ": the Tally proxy's class is not in "
                    + "the program's loader");
            c.check(s.supplierLoaderIsBoot, "thread " + k + ": the IntSupplier proxy's class is "
                    + "not in the boot loader");
            c.check(s.sameThroughHolder, "thread " + k + ": holder.tally != tally");
            c.check(s.equalsThroughHandler, "thread " + k + ": equals/hashCode missed the handler");
            if (s.made == null) {
                c.fail("thread " + k + ": the proxy it made did not arrive");
                continue;
            }
            c.check(s.made.getClass() == tally.getClass(), "thread " + k + ": its proxy is a "
                    + s.made.getClass() + " here, not " + tally.getClass());
            long before;
            synchronized (handler) {
                before = handler.total;
            }
            c.equal("thread " + k + ": its proxy's add(5)", s.made.add(5), before + 5);
        }
        c.done();
    }
}
