/*
 * @test
 * @summary A thread started on one node and run on another gets the InheritableThreadLocal
 *          values its parent had when the Thread was constructed (issue 25), through childValue,
 *          and passes them on to the threads it starts in turn; a plain ThreadLocal is not
 *          inherited, and the child's own changes stay its own.
 * @library /lib
 * @run main/othervm InheritedThreadLocals
 */
import java.util.ArrayList;
import java.util.List;

public class InheritedThreadLocals {
    static final InheritableThreadLocal<String> NAME = new InheritableThreadLocal<>();
    static final InheritableThreadLocal<List<String>> PATH = new InheritableThreadLocal<>() {
        @Override
        protected List<String> childValue(List<String> parent) {
            List<String> mine = new ArrayList<>(parent);
            mine.add("child");
            return mine;
        }
    };
    static final ThreadLocal<String> NOT_INHERITED = new ThreadLocal<>();

    static final String[] seen = new String[6];
    static volatile long childPid;

    public static void main(String[] args) throws Exception {
        Checks c = new Checks("InheritedThreadLocals");
        NAME.set("parent");
        List<String> root = new ArrayList<>();
        root.add("root");
        PATH.set(root);
        NOT_INHERITED.set("main only");

        Thread child = new Thread(() -> {
            childPid = ProcessHandle.current().pid();
            seen[0] = NAME.get();
            seen[1] = String.valueOf(PATH.get());
            seen[2] = NOT_INHERITED.get();
            NAME.set("changed by the child");
            Thread grandchild = new Thread(() -> {
                seen[3] = NAME.get();
                seen[4] = String.valueOf(PATH.get());
            }, "grandchild");
            grandchild.start();
            try {
                grandchild.join();
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }, "child");
        // Changes after construction are not the child's (java copies at construction).
        NAME.set("set after the child was made");
        child.start();
        child.join();
        seen[5] = NAME.get();

        if (Integer.getInteger("djava.test.threadServers", 0) > 0) {
            c.check(childPid != ProcessHandle.current().pid(), "the child ran on another node");
        }
        c.equal("the child's NAME", seen[0], "parent");
        c.equal("the child's PATH (childValue applied)", seen[1], "[root, child]");
        c.equal("the child's plain ThreadLocal", seen[2], null);
        c.equal("the grandchild's NAME (its parent's value at construction)", seen[3],
                "changed by the child");
        c.equal("the grandchild's PATH", seen[4], "[root, child, child]");
        c.equal("main's NAME after the child's change", seen[5], "set after the child was made");
        c.done();
    }
}
