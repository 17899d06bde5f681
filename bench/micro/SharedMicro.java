// The seed's Appendix A loops (Micro's) under djava, on objects in three
// states, for bench/micro/table6.py's djava columns:
//
//   local     objects that never escape this thread (no check but the mark
//             test: the common case in djava, where objects are published
//             only when they escape);
//   cached    the same loops on shared objects this node holds: in M (it
//             published them) for the write loops, in S (a thread on a
//             thread server has read them since) for the read loops. The
//             seed's Kaffe-NOW shared every object, so its rows 3-8 are
//             this column's kind;
//   uncached  the seed's "∞" loops, every access a miss: reads of objects
//             whose bytes are at their home sos-server, writes of objects
//             another node holds modified (UncachedRead.madeElsewhere).
//
// Local and cached runs of a loop follow each other (pairs, in one process).
// Needs a private cluster of 2 thread servers (the uncached objects are made
// on one and read on the other; the cached ones are read on either).
//
//   DJAVA_THREAD_SERVERS=2 build/bin/djava -cp CLASSES SharedMicro ITERATIONS OBJECTS
//
// Prints "row column ns" lines: ns per loop iteration; the uncached loops
// run over OBJECTS - 1 objects.
import djava.runtime.Node;

public class SharedMicro {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        int objects = Integer.parseInt(args[1]);

        Micro.SmallObject lo = new Micro.SmallObject().init();
        Micro.SmallObject lother = new Micro.SmallObject();
        Micro.SmallObject[] larr = new Micro.SmallObject[100];
        Micro.SmallObject[] lelems = Micro.elements(100);

        Micro.SmallObject so = new Micro.SmallObject().init();
        Micro.SmallObject sother = new Micro.SmallObject();
        Micro.SmallObject[] sarr = new Micro.SmallObject[100];
        Micro.SmallObject[] selems = Micro.elements(100);
        share(so, so.o, sother, sarr, selems);
        for (Micro.SmallObject e : selems) share(e, e.o);
        settle();

        report("empty-loop", "local", Micro.emptyLoop(n));
        report("new-object", "local", Micro.newObject(n));

        // Writes: this node published the shared objects, so it holds them in M.
        report("array-ref-write", "local", Micro.arrayRefWrite(larr, lo, n));
        report("array-ref-write", "cached", Micro.arrayRefWrite(sarr, so, n));
        report("int-field-write", "local", Micro.intFieldWrite(lo, n));
        report("int-field-write", "cached", Micro.intFieldWrite(so, n));
        report("ref-field-write", "local", Micro.refFieldWrite(lo, lother, n));
        report("ref-field-write", "cached", Micro.refFieldWrite(so, sother, n));
        report("uncached-int-field-write", "local", Micro.elementIntFieldWrite(lelems, 0, n));
        report("uncached-int-field-write", "cached", Micro.elementIntFieldWrite(selems, 0, n));
        report("uncached-ref-field-write", "local", Micro.elementRefFieldWrite(lelems, lother, 0, n));
        report("uncached-ref-field-write", "cached", Micro.elementRefFieldWrite(selems, sother, 0, n));

        // Reads: another node reads every shared object, so this node keeps S copies.
        readElsewhere(so, sarr, selems);
        settle();
        report("array-ref-read", "local", Micro.arrayRefRead(larr, n));
        report("array-ref-read", "cached", Micro.arrayRefRead(sarr, n));
        report("int-field-read", "local", Micro.intFieldRead(lo, n));
        report("int-field-read", "cached", Micro.intFieldRead(so, n));
        report("ref-field-read", "local", Micro.refFieldRead(lo, n));
        report("ref-field-read", "cached", Micro.refFieldRead(so, n));
        report("uncached-int-field-read", "local", Micro.elementIntFieldRead(lelems, 0, n));
        report("uncached-int-field-read", "cached", Micro.elementIntFieldRead(selems, 0, n));
        report("uncached-ref-field-read", "local", Micro.elementRefFieldRead(lelems, 0, n));
        report("uncached-ref-field-read", "cached", Micro.elementRefFieldRead(selems, 0, n));

        // Uncached: fresh objects each, made on a thread server.
        int m = objects - 1;
        Micro.SmallObject[] a = UncachedRead.madeElsewhere(objects, false);
        report("uncached-int-field-write", "uncached", Micro.elementIntFieldWrite(a, 1, m));
        UncachedRead.checkVar1(a, i -> i == 0 ? 0 : 7);
        a = UncachedRead.madeElsewhere(objects, false);
        report("uncached-ref-field-write", "uncached", Micro.elementRefFieldWrite(a, so, 1, m));
        for (int i = 1; i < objects; i++) {
            if (a[i].o != so) throw new AssertionError("a[" + i + "].o is not the stored object");
        }
        a = UncachedRead.madeElsewhere(objects, true);
        report("uncached-int-field-read", "uncached", Micro.elementIntFieldRead(a, 1, m));
        UncachedRead.checkVar1(a, i -> i);
        a = UncachedRead.madeElsewhere(objects, true);
        report("uncached-ref-field-read", "uncached", Micro.elementRefFieldRead(a, 1, m));
        for (int i = 0; i < objects; i++) {
            if (a[i].o == null || a[i].o == a[(i + 1) % objects].o) {
                throw new AssertionError("a[" + i + "].o is not its own object");
            }
        }
    }

    static void share(Object... objects) {
        for (Object o : objects) Node.publish(o);
    }

    /** A thread on a thread server reads every chunk the read loops read. */
    static void readElsewhere(Micro.SmallObject so, Micro.SmallObject[] sarr,
                              Micro.SmallObject[] selems) throws InterruptedException {
        String[] node = new String[1];
        int[] nulls = new int[1];
        Thread reader = new Thread(() -> {
            node[0] = Node.nodeName();
            int s = (so.var1 & 0) + (so.o == null ? 1 : 0) + (sarr[0] == so ? 0 : 1);
            for (Micro.SmallObject e : selems) s += (e.var1 & 0) + (e.o == null ? 1 : 0);
            nulls[0] = s;
        });
        reader.start();
        reader.join();
        if (node[0].equals(Node.nodeName())) {
            throw new AssertionError("the reader ran on this node, " + node[0]);
        }
        if (nulls[0] != 0) {
            throw new AssertionError("the reader saw " + nulls[0] + " references unset");
        }
    }

    /**
     * A precaution on these 2-core machines: lets the cluster's processes
     * finish what this program's start or a remote thread's end gave them
     * to do before the next timing.
     */
    static void settle() throws InterruptedException {
        Thread.sleep(200);
    }

    static void report(String row, String column, double ns) {
        System.out.printf("%s %s %.4f%n", row, column, ns);
    }
}
