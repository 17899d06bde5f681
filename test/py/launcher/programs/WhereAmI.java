/**
 * Prints, for main and for a thread it starts, the JDK it runs in and its
 * process: "main HOME PID" and "thread HOME PID" (under djava the thread
 * runs on a thread server).
 */
public class WhereAmI {
    static String where() {
        return System.getProperty("java.home") + " " + ProcessHandle.current().pid();
    }

    public static void main(String[] args) throws Exception {
        String[] seen = new String[1];
        Thread t = new Thread(() -> seen[0] = where());
        t.start();
        t.join();
        System.out.println("main " + where());
        System.out.println("thread " + seen[0]);
    }
}
