/*
 * djava: the default locale and time zone of the calling thread's program.
 *
 * Compiled into java.base (lib/djava-java.base.jar, which a VM with
 * -XX:+DistributedJava puts in front of java.base) together with the hooks
 * in Locale and TimeZone (patches/0030); the natives are VM functions
 * (dso/dsoProgramValues.cpp).
 */
package java.util;

/**
 * A program's default locales and time zone, the same on every node.
 *
 * <p>On java, {@code Locale.setDefault} and {@code TimeZone.setDefault} set
 * what every thread of the program formats with from then on. A program's
 * threads on a thread server would otherwise see the server's defaults
 * (its host's, or what another program set there), and print numbers,
 * dates and case conversions differently from the same code on the
 * launcher. So the program's defaults are one object: its launcher's
 * values, made shared the first time one of its threads on a thread server
 * asks (the server fetches it from the launcher, and keeps it until the
 * program ends). On a thread server, a program thread's {@code getDefault}
 * reads it and its {@code setDefault} writes it, leaving the server's own
 * defaults alone; on the launcher, {@code setDefault} writes it too, and
 * once it exists {@code getDefault} reads it, so a default a thread
 * elsewhere set is seen there. Threads of no program on a thread server
 * see the server's own defaults. Without a cluster this class is not
 * loaded.
 */
final class ProgramDefaults {
    /** What set() sets. */
    static final int LOCALE = 0, DISPLAY_LOCALE = 1, FORMAT_LOCALE = 2, TIME_ZONE = 3;

    volatile Locale locale;
    volatile Locale displayLocale;
    volatile Locale formatLocale;
    /** Never handed to the program: TimeZone.getDefault clones it. */
    volatile TimeZone timeZone;
    /**
     * The zone the launcher derives when the default is set to null (from its user.timezone,
     * as TimeZone does): what the program's default becomes then, on every node. A thread
     * server's own user.timezone is its host's.
     */
    volatile TimeZone derivedZone;

    private ProgramDefaults() {}

    private static native void registerNatives();
    /** This VM is a thread server. */
    private static native boolean onThreadServer();
    /** The calling thread's program's defaults, fetched from its launcher the first time; null for a thread of no program. */
    private static native ProgramDefaults of0();

    private static final boolean ON_THREAD_SERVER;
    static {
        registerNatives();
        ON_THREAD_SERVER = onThreadServer();
    }

    /** On a launcher: its program's defaults once a thread server asked for them (mirror()). */
    private static volatile ProgramDefaults launchers;

    /** The defaults that hold for the calling thread, or null: this JVM's own. */
    static ProgramDefaults current() {
        return ON_THREAD_SERVER ? of0() : launchers;
    }

    /**
     * A program's thread on a thread server sets one of its program's defaults (after the
     * caller's permission check): true, and the caller leaves this JVM's own alone. False for
     * any other thread, which sets this JVM's own and then calls set().
     */
    static boolean setOnThreadServer(int what, Object value) {
        ProgramDefaults p;
        if (!ON_THREAD_SERVER || (p = of0()) == null) {
            return false;
        }
        p.put(what, what == TIME_ZONE && value == null ? p.derivedZone : value);
        return true;
    }

    /**
     * After this JVM's own default was set: on a launcher whose program's defaults exist, they
     * get the value too. Ordered with mirror() by the class's lock, and called after the JVM's
     * own is set, so a mirror made meanwhile has the value either way.
     */
    static void set(int what, Object value) {
        if (!ON_THREAD_SERVER) {
            synchronized (ProgramDefaults.class) {
                ProgramDefaults p = launchers;
                if (p != null) {
                    if (what == TIME_ZONE && value == null) {
                        // As TimeZone does next: the zone of user.timezone, now.
                        TimeZone derived = derivedZone(p.derivedZone);
                        p.derivedZone = derived;
                        value = derived;
                    }
                    p.put(what, value);
                }
            }
        }
    }

    /** The zone user.timezone names on this JVM, or otherwise if it names none. */
    private static TimeZone derivedZone(TimeZone otherwise) {
        String id = sun.security.action.GetPropertyAction.privilegedGetProperty("user.timezone");
        return id == null || id.isEmpty() ? otherwise : TimeZone.getTimeZone(id);
    }

    private void put(int what, Object value) {
        switch (what) {
            case LOCALE -> locale = (Locale) value;
            case DISPLAY_LOCALE -> displayLocale = (Locale) value;
            case FORMAT_LOCALE -> formatLocale = (Locale) value;
            default -> timeZone = (TimeZone) value;
        }
    }

    /**
     * On a launcher: its program's defaults, made from this JVM's current ones the first time
     * (the VM calls this for a thread server's request, then shares the object).
     */
    static ProgramDefaults mirror() {
        ProgramDefaults made = launchers;
        if (made != null) {
            return made;  // every server after the first: no lock on the event pump
        }
        // Locale's lock first, as Locale.setDefault takes them.
        synchronized (Locale.class) {
            synchronized (ProgramDefaults.class) {
                ProgramDefaults p = launchers;
                if (p == null) {
                    p = new ProgramDefaults();
                    p.locale = Locale.getDefault();
                    p.displayLocale = Locale.getDefault(Locale.Category.DISPLAY);
                    p.formatLocale = Locale.getDefault(Locale.Category.FORMAT);
                    p.timeZone = TimeZone.getDefaultRef();
                    // getDefaultRef has derived the zone once, and set user.timezone.
                    p.derivedZone = derivedZone(p.timeZone);
                    launchers = p;
                }
                return p;
            }
        }
    }
}
