import java.util.ArrayList;
import java.util.List;

/**
 * A thread (on a thread server under djava) allocates until its heap runs out, and main
 * prints what the OutOfMemoryError said and which process threw it: "oom PID: MESSAGE".
 */
public class HeapExhaustion {
    static volatile String said;
    static volatile long pid;

    public static void main(String[] args) throws Exception {
        Thread t = new Thread(() -> {
            pid = ProcessHandle.current().pid();
            List<long[]> hog = new ArrayList<>();
            try {
                while (true) {
                    hog.add(new long[128 * 1024]);
                }
            } catch (OutOfMemoryError e) {
                hog = null;
                said = e.getMessage();
            }
        });
        t.start();
        t.join();
        System.out.println("oom " + pid + ": " + said);
        System.out.println("main " + ProcessHandle.current().pid());
    }
}
