import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A test harness's event channel (Maven Surefire's fork has one): stdout kept
 * in a buffered stream before System.setOut captures System.out, written by
 * main and flushed by a thread of its own, which djava runs on a thread
 * server. Every record reaches stdout once, in order; what threads print to
 * System.out after setOut is captured, wherever they run.
 */
public class KeptStdout {
    public static void main(String[] args) throws Exception {
        int records = Integer.parseInt(args[0]);
        long mainPid = ProcessHandle.current().pid();
        BufferedOutputStream channel = new BufferedOutputStream(System.out, 64 * 1024);
        AtomicBoolean done = new AtomicBoolean();
        long[] flusherPid = new long[1];
        Thread flusher = new Thread(() -> {
            flusherPid[0] = ProcessHandle.current().pid();
            try {
                while (!done.get()) {
                    channel.flush();
                    Thread.sleep(1);
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "flusher");
        flusher.start();
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true));
        Thread worker = new Thread(() -> System.out.println("a worker's line"), "worker");
        worker.start();
        worker.join();
        for (int i = 0; i < records; i++) {
            channel.write(("record " + i + "\n").getBytes());
            if (i % 10 == 9) {
                Thread.sleep(1);  // the flusher's turn
            }
        }
        channel.flush();
        done.set(true);
        flusher.join();
        System.setOut(original);
        System.err.print("captured: " + captured);
        System.err.println("flusher in another process: " + (flusherPid[0] != mainPid));
    }
}
