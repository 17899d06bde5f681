/*
 * @test
 * @summary A program's default locale and time zone are the same on every node: what main set
 *          with Locale.setDefault and TimeZone.setDefault is what its threads on thread servers
 *          format with, what one of them sets is what main sees next, setDefault(null) gives
 *          the zone of the launcher's user.timezone everywhere, and a later program on
 *          the same servers starts from its own launcher's defaults, not from what the first
 *          one set there. Each program's main runs on its launcher (a child djava JVM).
 * @library /lib
 * @run main/othervm ProgramDefaultsAcrossNodes
 */
import java.text.SimpleDateFormat;
import java.util.Date;
import java.util.Locale;
import java.util.TimeZone;

public class ProgramDefaultsAcrossNodes {
    static volatile String seen;
    static volatile long pid;

    /** What a thread elsewhere reads, as one line. */
    static String onAThread(Runnable r) throws InterruptedException {
        seen = null;
        Thread t = new Thread(() -> {
            pid = ProcessHandle.current().pid();
            r.run();
        });
        t.start();
        t.join();
        return seen;
    }

    static String defaults() {
        return Locale.getDefault() + " " + Locale.getDefault(Locale.Category.DISPLAY) + " "
                + Locale.getDefault(Locale.Category.FORMAT) + " " + TimeZone.getDefault().getID();
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            DjavaChild.runOnLauncher(ProgramDefaultsAcrossNodes.class, 300);
            // A later program, on the same thread servers (jtreg's cluster), with its own.
            DjavaChild.Result second = DjavaChild.run(ProgramDefaultsAcrossNodes.class, 300, "second");
            second.assertExitCode(0);
            if (!second.stdout.contains("ProgramDefaultsAcrossNodes (second): ok")) {
                throw new AssertionError(second.describe());
            }
            return;
        }
        boolean distributed = Integer.getInteger("djava.test.threadServers", 0) > 0;
        if (args[0].equals("second")) {
            Checks c = new Checks("ProgramDefaultsAcrossNodes (second)");
            String mine = defaults();
            c.equal("a later program's defaults on a thread", onAThread(() -> seen = defaults()), mine);
            c.done();
            System.out.println("ProgramDefaultsAcrossNodes (second): ok");
            return;
        }
        Checks c = new Checks("ProgramDefaultsAcrossNodes (launcher)");
        Locale.setDefault(Locale.GERMANY);
        TimeZone.setDefault(TimeZone.getTimeZone("Asia/Tokyo"));
        String formatted = onAThread(() -> {
            SimpleDateFormat zone = new SimpleDateFormat("zzzz");
            seen = String.format("%,.2f", 1234567.891) + " | " + "TITLE".toLowerCase() + " | "
                    + zone.format(new Date()) + " | " + defaults();
        });
        if (distributed) {
            c.check(pid != ProcessHandle.current().pid(), "the thread ran on another node");
        }
        c.equal("what a thread formats with after main set the defaults", formatted,
                "1.234.567,89 | title | Japanische Normalzeit | de_DE de_DE de_DE Asia/Tokyo");

        // A thread elsewhere sets them: main sees its values.
        onAThread(() -> {
            Locale.setDefault(Locale.FRANCE);
            Locale.setDefault(Locale.Category.FORMAT, Locale.ITALY);
            TimeZone.setDefault(TimeZone.getTimeZone("America/Sao_Paulo"));
            seen = defaults();
        });
        c.equal("main's defaults after a thread set them", defaults(),
                "fr_FR fr_FR it_IT America/Sao_Paulo");
        c.equal("another thread's", onAThread(() -> seen = defaults()),
                "fr_FR fr_FR it_IT America/Sao_Paulo");

        // setDefault(null): the zone the launcher's user.timezone names, on every node (a
        // thread server's own user.timezone is its host's).
        System.setProperty("user.timezone", "Pacific/Chatham");
        TimeZone.setDefault(null);
        c.equal("main's zone after its setDefault(null)", TimeZone.getDefault().getID(),
                "Pacific/Chatham");
        c.equal("a thread's zone after main's setDefault(null)",
                onAThread(() -> seen = TimeZone.getDefault().getID()), "Pacific/Chatham");
        c.equal("a thread's zone after its own setDefault(null)", onAThread(() -> {
            TimeZone.setDefault(TimeZone.getTimeZone("Europe/Oslo"));
            TimeZone.setDefault(null);
            seen = TimeZone.getDefault().getID();
        }), "Pacific/Chatham");
        c.equal("main's zone after a thread's setDefault(null)", TimeZone.getDefault().getID(),
                "Pacific/Chatham");
        c.done();
        System.out.println("ProgramDefaultsAcrossNodes (launcher): ok");
    }
}
