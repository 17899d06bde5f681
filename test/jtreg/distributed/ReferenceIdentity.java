/*
 * @test
 * @summary Object identity across nodes: == through two paths to one object holds on a thread
 *          server (and != for an equal but distinct object), objects made remotely keep their
 *          identity and identity hash, Thread.currentThread() == this inside run(), and the
 *          Thread object main holds is the one the thread sees.
 * @library /lib
 * @run main/othervm ReferenceIdentity
 */
public class ReferenceIdentity {
    static final class Node {
        final String name;
        Node next;

        Node(String name) {
            this.name = name;
        }

        @Override
        public String toString() {
            return "Node(" + name + ")@" + Integer.toHexString(System.identityHashCode(this));
        }
    }

    static final class Holder {
        Node ref;
        Node other;
        String text;
        String literal;
        Object made;
        Thread current;
    }

    /** Compares on a thread server what main set up; records what it saw. */
    static final class Comparer extends Thread {
        final Holder h1;
        final Holder h2;
        final Node direct;
        final Object[] array;
        boolean sameViaHolders;
        boolean sameViaDirect;
        boolean sameViaArray;
        boolean twinDistinct;
        boolean sameText;
        boolean literalInterned;
        boolean currentIsThis;
        int hashSeen;
        int madeHash;
        long garbage;

        Comparer(Holder h1, Holder h2, Node direct, Object[] array) {
            super("comparer");
            this.h1 = h1;
            this.h2 = h2;
            this.direct = direct;
            this.array = array;
        }

        @Override
        public void run() {
            garbage += Churn.garbage(10000);
            sameViaHolders = h1.ref == h2.ref;
            sameViaDirect = h1.ref == direct && h2.ref == direct;
            sameViaArray = array[0] == array[1] && array[0] == direct;
            twinDistinct = h1.other != h2.ref && h1.other != direct;
            // Strings travel by value (the design's rule): an interned one is
            // this node's interned instance, another one an equal copy.
            sameText = h1.text.equals(h2.text) && h1.text != null;
            literalInterned = h1.literal == "djava: an interned literal";
            currentIsThis = Thread.currentThread() == this;
            hashSeen = System.identityHashCode(direct);
            h1.current = Thread.currentThread();
            Node made = new Node("made on a thread server");
            made.next = direct;
            madeHash = System.identityHashCode(made);
            garbage += Churn.garbage(10000);
            h1.made = made;
            h2.made = made;
        }
    }

    public static void main(String[] args) throws Exception {
        Node shared = new Node("shared");
        Node twin = new Node("shared");
        String text = new String("not interned " + System.nanoTime());
        Holder h1 = new Holder();
        Holder h2 = new Holder();
        h1.ref = shared;
        h2.ref = shared;
        h1.other = twin;
        h1.text = text;
        h2.text = text;
        h1.literal = "djava: an interned literal";
        Object[] array = {shared, shared};
        int sharedHash = System.identityHashCode(shared);

        Comparer comparer = new Comparer(h1, h2, shared, array);
        comparer.start();
        Threads.joinAll(comparer);

        Checks c = new Checks("ReferenceIdentity");
        c.check(comparer.sameViaHolders, "remotely h1.ref != h2.ref (both hold " + shared + ")");
        c.check(comparer.sameViaDirect, "remotely h1.ref/h2.ref != the thread's own field to the same node");
        c.check(comparer.sameViaArray, "remotely array[0], array[1] and the thread's field differ");
        c.check(comparer.twinDistinct, "remotely an equal but distinct object compared == to " + shared);
        c.check(comparer.sameText, "remotely h1.text and h2.text differ in content (one String)");
        c.check(comparer.literalInterned, "remotely an interned literal is not the node's interned instance");
        c.check(comparer.currentIsThis, "Thread.currentThread() != this inside Comparer.run()");
        c.equal("identityHashCode(shared) on the thread server", comparer.hashSeen, sharedHash);
        c.check(h1.current == comparer, "Thread.currentThread() stored by the thread is "
                + h1.current + ", not main's Thread object " + comparer);
        c.check(h1.made != null && h1.made == h2.made, "the object made remotely reached through h1 and h2: "
                + h1.made + " vs " + h2.made);
        c.check(h1.made instanceof Node && ((Node) h1.made).next == shared,
                "made.next is not main's shared node");
        if (h1.made != null) {
            c.equal("identityHashCode of the object made remotely, seen by main",
                    System.identityHashCode(h1.made), comparer.madeHash);
        }

        // A second thread, possibly on the other node, compares the remotely made object
        // through both paths; a lambda thread's currentThread() is main's Thread object too.
        Holder h3 = new Holder();
        Holder h4 = new Holder();
        Holder h5 = new Holder();
        String text2 = new String("also not interned " + System.nanoTime());
        h4.text = text2;
        h5.text = text2;
        boolean[] seen = new boolean[4];
        int[] madeHashSeen = new int[1];
        Thread second = new Thread(() -> {
            seen[0] = h1.made == h2.made && h1.made != null;
            seen[1] = ((Node) h1.made).next == h2.ref;
            seen[2] = h1.current != Thread.currentThread();
            seen[3] = h4.text.equals(h5.text);  // strings travel by value
            madeHashSeen[0] = System.identityHashCode(h2.made);
            h3.current = Thread.currentThread();
        }, "second");
        second.start();
        Threads.joinAll(second);
        c.check(seen[0], "on the second thread h1.made != h2.made");
        c.check(seen[1], "on the second thread made.next != h2.ref");
        c.check(seen[2], "on the second thread its currentThread() == the first thread");
        c.check(seen[3], "on the second thread h4.text and h5.text differ in content (one String)");
        c.equal("identityHashCode of the made object on the second thread", madeHashSeen[0], comparer.madeHash);
        c.check(h3.current == second, "lambda thread's Thread.currentThread() is " + h3.current
                + ", not main's Thread object " + second);
        c.done();
    }
}
