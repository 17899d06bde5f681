// Threads whose targets are lambdas and method references, shipped to thread
// servers (test/py/jvm/test_lambdas.py). Scenarios, by the first argument:
//   lambdas      four threads, three lambdas capturing a shared array and a
//                method reference bound to an object holding it, each writes
//                its slot; the launcher reads them after join
//   unshareable  a thread whose lambda captured the FileDescriptor of a file
//                the launcher opened: it runs on the launcher, where the
//                descriptor is open
import java.io.FileDescriptor;
import java.util.Arrays;

public class LambdaThreads {
    static final class Task {
        final int[] results;
        final int k;
        Task(int[] results, int k) { this.results = results; this.k = k; }
        void work() {
            results[k] = 1000 + k * k;
            System.out.println("worker " + k + " on " + ProcessHandle.current().pid());
        }
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "lambdas": {
                int[] results = new int[4];
                Thread[] ts = new Thread[4];
                for (int i = 0; i < 3; i++) {
                    int k = i;
                    ts[i] = new Thread(() -> {
                        results[k] = 1000 + k * k;
                        System.out.println("worker " + k + " on " + ProcessHandle.current().pid());
                    });
                }
                ts[3] = new Thread(new Task(results, 3)::work);
                for (Thread t : ts) t.start();
                for (Thread t : ts) t.join();
                System.out.println("launcher " + ProcessHandle.current().pid());
                System.out.println("results " + Arrays.toString(results) + " sum "
                                   + Arrays.stream(results).sum());
                break;
            }
            case "unshareable": {
                java.io.File file = java.io.File.createTempFile("lambda-threads", ".txt");
                file.deleteOnExit();
                try (java.io.FileInputStream in = new java.io.FileInputStream(file)) {
                    FileDescriptor fd = in.getFD();
                    Thread t = new Thread(() -> System.out.println("valid " + fd.valid() + " in "
                            + ProcessHandle.current().pid()), "fd-user");
                    try {
                        t.start();
                        t.join();
                        System.out.println("started");
                    } catch (IllegalArgumentException e) {
                        System.out.println("start refused " + e);
                    }
                    System.out.println("main in " + ProcessHandle.current().pid() + " alive="
                            + t.isAlive());
                }
                break;
            }
            default:
                throw new IllegalArgumentException(args[0]);
        }
    }
}
