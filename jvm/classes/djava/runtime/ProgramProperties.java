/*
 * djava: System properties on a thread server, per program.
 *
 * A program's threads that run on a thread server see what `java -Dk=v`
 * and the program's own System.setProperty (before the thread started) put
 * into the launcher's properties, over this node's own: the launcher sends
 * its properties when the server first runs one of the program's threads,
 * minus the keys that describe a node's JDK, machine and user (java.*,
 * jdk.*, sun.*, os.*, user.*, file.*, ...), which stay this node's: the JDK
 * here must find its own files. java.class.path is the program's (its
 * classes come from the launcher's class path, and a child JVM the program
 * starts with it must find them). Each program gets its own copy; a
 * setProperty on this node stays in that copy (it does not reach the
 * launcher or other nodes). Threads that belong to no program (the
 * server's own) see the node's properties.
 *
 * Installed with System.setProperties, this object stands for every
 * program's properties at once: each public method works on the calling
 * thread's program's copy.
 */
package djava.runtime;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.Reader;
import java.io.Writer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Function;

final class ProgramProperties extends Properties {
    private static final long serialVersionUID = 1L;

    /** Keys that describe a node, not a program (the launcher keeps them to itself). */
    private static final String[] NODE_PREFIXES = {
        "java.", "jdk.", "sun.", "os.", "user.", "file.", "native.", "stdout.", "stderr.",
        "line.separator", "path.separator", "awt.", "djava.",
    };

    /** Resource name under which a launcher answers with its program properties. */
    static final String RESOURCE = "djava:program-properties";

    private final transient Properties node;
    private final transient Map<Long, Properties> programs = new ConcurrentHashMap<>();

    private ProgramProperties(Properties node) {
        this.node = node;
    }

    /** On a thread server: from now on System properties are per program. */
    static void install() {
        System.setProperties(new ProgramProperties(System.getProperties()));
    }

    /** Keys under a node prefix that describe the program: its class path is the launcher's. */
    private static final String[] PROGRAM_KEYS = {"java.class.path"};

    static boolean isNodeKey(String key) {
        for (String programKey : PROGRAM_KEYS) {
            if (key.equals(programKey)) {
                return false;
            }
        }
        for (String prefix : NODE_PREFIXES) {
            if (key.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    /** Keys of the launcher's module options in its answer (ModuleOptions), numbered. */
    static final String MODULE_OPTION_PREFIX = "djava.module.option.";

    /**
     * The launcher's answer: its properties a program's threads elsewhere see, and its module
     * options (which hold for the program on every node).
     */
    static byte[] launcherProperties() throws IOException {
        Properties sent = new Properties();
        for (String key : System.getProperties().stringPropertyNames()) {
            if (!isNodeKey(key)) {
                sent.setProperty(key, System.getProperty(key));
            }
        }
        String[] options = Node.moduleOptions();
        for (int i = 0; i < options.length; i++) {
            sent.setProperty(MODULE_OPTION_PREFIX + i, options[i]);
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        sent.store(out, null);
        return out.toByteArray();
    }

    /**
     * A program starts here: its copy is this node's properties under the launcher's. Returns
     * the launcher's module options, in order.
     */
    static List<String> addProgram(long program, byte[] launcher) throws IOException {
        List<String> moduleOptions = new ArrayList<>();
        Properties props = System.getProperties();
        if (!(props instanceof ProgramProperties)) {
            return moduleOptions;
        }
        ProgramProperties all = (ProgramProperties) props;
        Properties copy = new Properties();
        copy.putAll(all.node);
        if (launcher != null) {
            Properties sent = new Properties();
            sent.load(new ByteArrayInputStream(launcher));
            for (String key : sent.stringPropertyNames()) {
                if (!isNodeKey(key)) {
                    copy.setProperty(key, sent.getProperty(key));
                }
            }
            for (int i = 0; sent.getProperty(MODULE_OPTION_PREFIX + i) != null; i++) {
                moduleOptions.add(sent.getProperty(MODULE_OPTION_PREFIX + i));
            }
        }
        all.programs.put(program, copy);
        return moduleOptions;
    }

    static void dropProgram(long program) {
        Properties props = System.getProperties();
        if (props instanceof ProgramProperties) {
            ((ProgramProperties) props).programs.remove(program);
        }
    }

    private Properties current() {
        long program = Node.programOf(Thread.currentThread());
        Properties p = program == 0 ? null : programs.get(program);
        return p != null ? p : node;
    }

    // ---- every public method on the caller's program's copy ----------------
    @Override public Object setProperty(String key, String value) { return current().setProperty(key, value); }
    @Override public String getProperty(String key) { return current().getProperty(key); }
    @Override public String getProperty(String key, String def) { return current().getProperty(key, def); }
    @Override public Enumeration<?> propertyNames() { return current().propertyNames(); }
    @Override public Set<String> stringPropertyNames() { return current().stringPropertyNames(); }
    @Override public void load(Reader reader) throws IOException { current().load(reader); }
    @Override public void load(InputStream in) throws IOException { current().load(in); }
    @Override public void store(Writer writer, String comments) throws IOException { current().store(writer, comments); }
    @Override public void store(OutputStream out, String comments) throws IOException { current().store(out, comments); }
    @Override public void loadFromXML(InputStream in) throws IOException { current().loadFromXML(in); }
    @Override public void storeToXML(OutputStream os, String comment) throws IOException { current().storeToXML(os, comment); }
    @Override public void storeToXML(OutputStream os, String comment, String encoding) throws IOException { current().storeToXML(os, comment, encoding); }
    @Override public void list(PrintStream out) { current().list(out); }
    @Override public void list(PrintWriter out) { current().list(out); }
    @Override public int size() { return current().size(); }
    @Override public boolean isEmpty() { return current().isEmpty(); }
    @Override public Enumeration<Object> keys() { return current().keys(); }
    @Override public Enumeration<Object> elements() { return current().elements(); }
    @Override public boolean contains(Object value) { return current().contains(value); }
    @Override public boolean containsValue(Object value) { return current().containsValue(value); }
    @Override public boolean containsKey(Object key) { return current().containsKey(key); }
    @Override public Object get(Object key) { return current().get(key); }
    @Override public Object put(Object key, Object value) { return current().put(key, value); }
    @Override public Object remove(Object key) { return current().remove(key); }
    @Override public void putAll(Map<?, ?> t) { current().putAll(t); }
    @Override public void clear() { current().clear(); }
    @Override public String toString() { return current().toString(); }
    @Override public Set<Object> keySet() { return current().keySet(); }
    @Override public Collection<Object> values() { return current().values(); }
    @Override public Set<Map.Entry<Object, Object>> entrySet() { return current().entrySet(); }
    @Override public boolean equals(Object o) { return current().equals(o); }
    @Override public int hashCode() { return current().hashCode(); }
    @Override public Object getOrDefault(Object key, Object def) { return current().getOrDefault(key, def); }
    @Override public void forEach(BiConsumer<? super Object, ? super Object> action) { current().forEach(action); }
    @Override public void replaceAll(BiFunction<? super Object, ? super Object, ?> f) { current().replaceAll(f); }
    @Override public Object putIfAbsent(Object key, Object value) { return current().putIfAbsent(key, value); }
    @Override public boolean remove(Object key, Object value) { return current().remove(key, value); }
    @Override public boolean replace(Object key, Object old, Object value) { return current().replace(key, old, value); }
    @Override public Object replace(Object key, Object value) { return current().replace(key, value); }
    @Override public Object computeIfAbsent(Object key, Function<? super Object, ?> f) { return current().computeIfAbsent(key, f); }
    @Override public Object computeIfPresent(Object key, BiFunction<? super Object, ? super Object, ?> f) { return current().computeIfPresent(key, f); }
    @Override public Object compute(Object key, BiFunction<? super Object, ? super Object, ?> f) { return current().compute(key, f); }
    @Override public Object merge(Object key, Object value, BiFunction<? super Object, ? super Object, ?> f) { return current().merge(key, value, f); }
    @Override public Object clone() { return current().clone(); }
}
