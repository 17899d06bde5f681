// Lambdas and method references in shared objects, driven from stdin one
// command a line, one answer a line (test/py/jvm/test_lambdas.py runs two):
//   publish        makes a Holder of lambdas shared; "id N"
//   attach N       takes shared object N as the root; "attached CLASS"
//   call           calls every lambda of the root; their results as one line
//   bump K         root.bump.run() K times (it adds its captured step to the
//                  shared box it captured); "box V"
//   identity       whether the root's lambdas keep identity; their hashes
//   write-back     stores root.greet and a lambda made here in the root
//   read-back      whether root.back is root.greet; root.fresh.get()
//   hidden         tries to share an object of a non-lambda hidden class
//   own-loader-proxy  tries to share a proxy whose class a loader of the
//                  program defined
//   class          the class of root.greet here
//   local          makes a Holder here too (its call sites run on this node)
//   same-class     whether root's lambdas have the classes of this node's own
//   publish-lambda K  makes a lambda capturing K the root of a publication; "id N"
//   attach-lambda N   calls the lambda with id N
// A failing command answers "error " and the exception.
import djava.runtime.Node;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Serializable;
import java.lang.invoke.MethodHandles;
import java.util.function.Function;
import java.util.function.IntBinaryOperator;
import java.util.function.Supplier;

public class LambdaProbe {
    static class Box {
        int i;
        Box() { i = -1; }
        Box(int i) { this.i = i; }
        // A lambda whose host is a nested class, capturing this.
        Supplier<String> reader() { return () -> "box" + i; }
        String describe() { return "box"; }
        static String hello() { return "hello"; }
    }

    static class SubBox extends Box {
        SubBox(int i) { super(i); }
        @Override String describe() { return "sub"; }
        // super::describe: LambdaMetafactory invokes it through a method
        // handle (class data), not by name.
        Supplier<String> viaSuper() { return super::describe; }
    }

    static int len(Object o) { return o.toString().length(); }
    static void noop() {}

    static class Holder {
        Runnable bump;                      // captures a shared object and an int
        Supplier<String> greet;             // captures ints, strings, long, double, char, boolean
        Function<Integer, Integer> addK;    // captures an int, boxes
        Supplier<String> constant;          // captures nothing
        Function<String, Integer> length;   // String::length
        Function<String, String> prefixer;  // "pre-"::concat, a bound receiver
        Supplier<Box> maker;                // Box::new
        IntBinaryOperator max;              // Math::max
        Runnable serial;                    // (Runnable & Serializable), altMetafactory
        Object[] same;                      // {greet, greet}
        Box box;
        Object back;                        // written by the other node
        Supplier<String> fresh;             // a lambda made on the other node
        String serialRan = "no";
        Supplier<String> reader;            // host LambdaProbe$Box, captures it
        Supplier<String> viaSuper;          // super::describe
        Function<String, Integer> viaString;  // LambdaProbe::len, two sites that differ
        Function<Object, Integer> viaObject;  // only in the instantiated type
        Runnable plainNoop;                 // LambdaProbe::noop, two sites that differ
        Runnable serialNoop;                // only in being serializable
        Supplier<String> inherited;         // SubBox::hello, declared in Box
    }

    // A class defined hidden at run time, not by LambdaMetafactory.
    public static class Plain {
        public int v = 5;
    }

    static Holder root;
    static Holder mine;

    static Holder fresh() {
        Holder h = new Holder();
        Box box = new Box(100);
        int step = 7;
        int k = 42;
        String who = "wörld";
        long big = 1L << 40;
        double third = 1.0 / 3;
        char c = 'q';
        boolean yes = true;
        h.box = box;
        h.bump = () -> box.i += step;
        h.greet = () -> "hello " + who + " " + k + " " + big + " " + third + " " + c + " " + yes;
        h.addK = x -> x + k;
        h.constant = () -> "constant";
        h.length = String::length;
        h.prefixer = "pre-"::concat;
        h.maker = Box::new;
        h.max = Math::max;
        Holder self = h;
        h.serial = (Runnable & Serializable) () -> self.serialRan = "yes";
        h.same = new Object[] {h.greet, h.greet};
        h.reader = box.reader();
        h.viaSuper = new SubBox(3).viaSuper();
        h.viaString = LambdaProbe::len;
        h.viaObject = LambdaProbe::len;
        h.plainNoop = LambdaProbe::noop;
        h.serialNoop = (Runnable & Serializable) LambdaProbe::noop;
        h.inherited = SubBox::hello;
        return h;
    }

    static String call(Holder h) {
        h.serial.run();
        return "greet=" + h.greet.get().replace(' ', '_') + " addK=" + h.addK.apply(8)
            + " constant=" + h.constant.get() + " length=" + h.length.apply("abcde")
            + " prefixer=" + h.prefixer.apply("x") + " maker=" + h.maker.get().i
            + " max=" + h.max.applyAsInt(3, 9) + " serial=" + h.serialRan
            + " box=" + h.box.i + " reader=" + h.reader.get() + " viaSuper=" + h.viaSuper.get()
            + " viaString=" + h.viaString.apply("abc") + " viaObject=" + h.viaObject.apply(12345)
            + " stringChecked=" + checksString(h.viaString)
            + " objectChecked=" + checksString(h.viaObject)
            + " serializable=" + (h.plainNoop instanceof Serializable) + ","
            + (h.serialNoop instanceof Serializable) + " inherited=" + h.inherited.get();
    }

    // Whether f refuses a non-String argument, as a Function<String, ?> does.
    @SuppressWarnings({"unchecked", "rawtypes"})
    static boolean checksString(Function f) {
        try {
            f.apply(7);
            return false;
        } catch (ClassCastException e) {
            return true;
        }
    }

    static String run(String[] w) throws Throwable {
        switch (w[0]) {
            case "publish":
                root = fresh();
                return "id " + Node.publish(root);
            case "attach":
                root = (Holder) Node.attach(Long.parseLong(w[1]));
                return "attached " + root.getClass().getName();
            case "call":
                return call(root);
            case "bump": {
                int n = Integer.parseInt(w[1]);
                for (int x = 0; x < n; x++) root.bump.run();
                return "box " + root.box.i;
            }
            case "identity":
                return "same=" + (root.same[0] == root.greet && root.same[1] == root.greet)
                    + " hash=" + System.identityHashCode(root.greet)
                    + "," + System.identityHashCode(root.bump);
            case "write-back": {
                root.back = root.greet;
                long pid = ProcessHandle.current().pid();
                root.fresh = () -> "made on " + pid;
                return "wrote";
            }
            case "read-back":
                return "back=" + (root.back == root.greet) + " fresh=" + root.fresh.get().replace(' ', '_');
            case "hidden": {
                byte[] bytes;
                try (InputStream in = LambdaProbe.class.getResourceAsStream("LambdaProbe$Plain.class")) {
                    bytes = in.readAllBytes();
                }
                Class<?> hidden = MethodHandles.lookup().defineHiddenClass(bytes, true).lookupClass();
                Object o = hidden.getConstructor().newInstance();
                try {
                    Node.publish(o);
                    return "shared a hidden object";
                } catch (IllegalArgumentException e) {
                    return "refused " + e.getMessage();
                }
            }
            case "own-loader-proxy": {
                ClassLoader own = new ClassLoader(LambdaProbe.class.getClassLoader()) {};
                Object o = java.lang.reflect.Proxy.newProxyInstance(own, new Class<?>[] {Runnable.class},
                                                                    (p, m, a) -> null);
                try {
                    Node.publish(o);
                    return "shared a proxy of its own loader";
                } catch (IllegalArgumentException e) {
                    return "refused " + e.getMessage();
                }
            }
            case "publish-lambda": {
                int k = Integer.parseInt(w[1]);
                Supplier<String> direct = () -> "direct " + k;
                return "id " + Node.publish(direct);
            }
            case "attach-lambda": {
                @SuppressWarnings("unchecked")
                Supplier<String> direct = (Supplier<String>) Node.attach(Long.parseLong(w[1]));
                return direct.get();
            }
            case "local":
                mine = fresh();
                return "local " + mine.greet.get().length();
            case "same-class":
                return "same-class " + (mine.greet.getClass() == root.greet.getClass()) + ","
                    + (mine.constant.getClass() == root.constant.getClass()) + ","
                    + (mine.viaObject.getClass() == root.viaObject.getClass());
            case "class":
                return "class " + root.greet.getClass().getName();
            default:
                return "unknown command " + w[0];
        }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            String answer;
            try {
                answer = run(line.trim().split(" "));
            } catch (Throwable t) {
                answer = "error " + t;
            }
            System.out.println(answer);
            System.out.flush();
        }
    }
}
