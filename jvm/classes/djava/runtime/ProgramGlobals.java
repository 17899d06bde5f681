/*
 * djava: the JDK's process-wide settings a program changes on a thread server.
 *
 * A thread server's JDK is shared by every program it runs, so what a
 * program's thread sets there with System.setSecurityManager,
 * Policy.setPolicy or Thread.setDefaultUncaughtExceptionHandler holds on
 * that server for every program, not for its own program on every node.
 * When a program ends, a setting it left behind is taken back (the
 * server's own, none, comes back), so that it never reaches a later
 * program: a setting whose class is the ended program's, or any setting
 * once no program runs here (a JDK class, such as java.lang.SecurityManager
 * itself, does not say which program installed it). docs/HEAP.md, "What a
 * thread server's programs share".
 */
package djava.runtime;

import java.security.AccessController;
import java.security.Policy;
import java.security.PrivilegedAction;

final class ProgramGlobals {
    private ProgramGlobals() {}

    /** The program whose classes loader defined has ended; lastOne: no other runs here. */
    @SuppressWarnings("removal")  // the Security Manager's API, deprecated for removal
    static void programEnded(ClassLoader loader, boolean lastOne) {
        // Each take-back on its own: a setting's own code may run in it (an
        // ended program's class may no longer load), and whatever it
        // throws, the server goes on.
        AccessController.doPrivileged((PrivilegedAction<Void>) () -> {
            attempt("security manager", () -> {
                SecurityManager sm = System.getSecurityManager();
                if (sm != null && (lastOne || sm.getClass().getClassLoader() == loader)) {
                    // Not System.setSecurityManager(null): the manager checks
                    // its own removal, and may refuse it.
                    Node.clearSecurityManager();
                    taken("security manager", sm);
                }
            });
            attempt("policy", () -> {
                if (System.getSecurityManager() == null) {
                    // Asked only without a security manager: the policy then
                    // decides nothing, and Policy.getPolicy needs no permission.
                    Policy policy = Policy.getPolicy();
                    if (isProgramClass(policy, loader, lastOne)) {
                        Policy.setPolicy(null);  // the JDK's default, read again when asked
                        taken("policy", policy);
                    }
                }
            });
            attempt("default uncaught exception handler", () -> {
                Thread.UncaughtExceptionHandler handler = Thread.getDefaultUncaughtExceptionHandler();
                if (isProgramClass(handler, loader, lastOne)) {
                    Thread.setDefaultUncaughtExceptionHandler(null);
                    taken("default uncaught exception handler", handler);
                }
            });
            return null;
        });
    }

    private static void attempt(String what, Runnable takeBack) {
        try {
            takeBack.run();
        } catch (Throwable t) {
            System.err.println("thread-server " + Node.nodeName() + ": cannot take back the " + what
                    + " a program set: " + t);
        }
    }

    private static boolean isProgramClass(Object setting, ClassLoader loader, boolean lastOne) {
        if (setting == null) {
            return false;
        }
        ClassLoader definer = setting.getClass().getClassLoader();
        return definer == loader || (lastOne && definer instanceof ProgramLoader);
    }

    private static void taken(String what, Object setting) {
        System.err.println("thread-server " + Node.nodeName() + ": took back the " + what + " ("
                + setting.getClass().getName() + ") a program set");
    }
}
