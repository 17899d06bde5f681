/*
 * djava: every live thread of the calling thread's program, wherever it runs.
 *
 * Thread.getAllStackTraces (through JVM_GetAllThreads, patches/0029) lists
 * a program's threads on every node, as java lists them in its one JVM. A
 * program's thread groups are shared objects that list their threads
 * wherever those run (docs/HEAP.md), so the program's top group, the one
 * below the system group (main's, on its launcher), enumerates them all;
 * the VM adds this node's own threads that are in no group of the program
 * (the JVM's and djava's, as java shows the JVM's).
 */
package djava.runtime;

import java.util.Arrays;

final class ProgramThreads {
    private ProgramThreads() {}

    /** Called by the VM for a thread of a program. */
    static Thread[] all() {
        ThreadGroup top = Thread.currentThread().getThreadGroup();
        if (top == null) {
            return new Thread[0];  // the caller ended meanwhile
        }
        for (ThreadGroup up = top.getParent(); up != null && up.getParent() != null; up = up.getParent()) {
            top = up;
        }
        if (top.getParent() == null) {
            return new Thread[0];  // a thread of the system group is no program's
        }
        // enumerate fills at most the array's length: grow it until the
        // count fits with room to spare (threads start meanwhile).
        Thread[] threads = new Thread[Math.max(16, 2 * top.activeCount())];
        int n;
        while ((n = top.enumerate(threads, true)) == threads.length) {
            threads = new Thread[2 * threads.length];
        }
        return Arrays.copyOf(threads, n);
    }
}
