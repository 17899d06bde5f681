/*
 * @test
 * @summary The program's module options and class path hold on every node (issue 25): with
 *          --add-opens java.base/java.util.concurrent=ALL-UNNAMED
 *          a thread on a thread server may make a private field of ConcurrentHashMap
 *          accessible, as main may; getResource, getResources and ServiceLoader find the
 *          resources of the launcher's class path from a thread on a thread server (a service
 *          provider file written there at run time included).
 * @modules java.base/java.util.concurrent:open
 * @library /lib
 * @run main/othervm ModuleOptionsAndResources
 */
import java.io.InputStream;
import java.lang.reflect.Field;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.ServiceLoader;
import java.util.concurrent.ConcurrentHashMap;

public class ModuleOptionsAndResources {
    public interface Greeter {
        String greet();
    }

    public static final class EnglishGreeter implements Greeter {
        public EnglishGreeter() {
        }

        @Override
        public String greet() {
            return "hello";
        }
    }

    static final String SERVICE = "META-INF/services/" + Greeter.class.getName();
    static volatile String opened;
    static volatile String resource;
    static volatile int copies;
    static volatile String greetings;
    static volatile long pid;

    public static void main(String[] args) throws Exception {
        Checks c = new Checks("ModuleOptionsAndResources");
        c.equal("main opens ConcurrentHashMap.table", openTable(), "opened");
        // A provider file in the class path's directory, written now.
        Path classes = Path.of(System.getProperty("test.classes"));
        Files.createDirectories(classes.resolve("META-INF/services"));
        Files.writeString(classes.resolve(SERVICE), EnglishGreeter.class.getName() + "\n");

        Thread t = new Thread(() -> {
            pid = ProcessHandle.current().pid();
            opened = openTable();
            try {
                ClassLoader loader = ModuleOptionsAndResources.class.getClassLoader();
                URL url = loader.getResource(SERVICE);
                try (InputStream in = url.openStream()) {
                    resource = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
                }
                copies = Collections.list(loader.getResources(SERVICE)).size();
                List<String> said = new ArrayList<>();
                for (Greeter g : ServiceLoader.load(Greeter.class, loader)) {
                    said.add(g.greet());
                }
                greetings = said.toString();
            } catch (Exception e) {
                resource = e.toString();
            }
        }, "elsewhere");
        t.start();
        t.join();
        if (Integer.getInteger("djava.test.threadServers", 0) > 0) {
            c.check(pid != 0, "the thread ran");
        }
        c.equal("a thread opens ConcurrentHashMap.table", opened, "opened");
        c.equal("the provider file read through getResource", resource, EnglishGreeter.class.getName());
        c.equal("copies of it through getResources", copies, 1);
        c.equal("what ServiceLoader's providers say", greetings, "[hello]");
        c.done();
    }

    static String openTable() {
        try {
            Field table = ConcurrentHashMap.class.getDeclaredField("table");
            table.setAccessible(true);
            table.get(new ConcurrentHashMap<String, String>());
            return "opened";
        } catch (Exception e) {
            return e.toString();
        }
    }
}
