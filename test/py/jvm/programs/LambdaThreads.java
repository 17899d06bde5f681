// Threads whose targets are lambdas and method references, shipped to thread
// servers (test/py/jvm/test_lambdas.py). Scenarios, by the first argument:
//   lambdas      four threads, three lambdas capturing a shared array and a
//                method reference bound to an object holding it, each writes
//                its slot; the launcher reads them after join
//   unshareable  a thread whose lambda captured a FileDescriptor: start()
//                refuses it
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
                FileDescriptor fd = FileDescriptor.out;
                Thread t = new Thread(() -> System.out.println("valid " + fd.valid()), "fd-user");
                try {
                    t.start();
                    t.join();
                    System.out.println("started");
                } catch (IllegalArgumentException e) {
                    System.out.println("start refused " + e);
                }
                System.out.println("after refusal alive=" + t.isAlive());
                break;
            }
            default:
                throw new IllegalArgumentException(args[0]);
        }
    }
}
