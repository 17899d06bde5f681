package example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** Multithreaded tests; the processes their threads ran in go to target/thread-pids.txt. */
class ThreadsTest {
    static final Set<Long> PIDS = ConcurrentHashMap.newKeySet();

    @Test
    void threadsAddUpToTheSameSum() throws Exception {
        AtomicLong sum = new AtomicLong();
        Thread[] workers = new Thread[4];
        for (int w = 0; w < workers.length; w++) {
            final int first = w;
            workers[w] = new Thread(() -> {
                PIDS.add(ProcessHandle.current().pid());
                long part = 0;
                for (int i = first; i < 100_000; i += 4) {
                    part += i;
                }
                sum.addAndGet(part);
            });
            workers[w].start();
        }
        for (Thread t : workers) {
            t.join();
        }
        assertEquals(4_999_950_000L, sum.get());
    }

    @Test
    void aPoolsTasksReturnTheirResults() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            Future<?>[] squares = new Future<?>[20];
            for (int i = 0; i < squares.length; i++) {
                final int n = i;
                squares[i] = pool.submit(() -> {
                    PIDS.add(ProcessHandle.current().pid());
                    return n * n;
                });
            }
            for (int i = 0; i < squares.length; i++) {
                assertEquals(i * i, squares[i].get());
            }
        } finally {
            pool.shutdown();
        }
    }

    @AfterAll
    static void recordProcesses() throws Exception {
        Set<Long> all = new TreeSet<>(PIDS);
        all.add(ProcessHandle.current().pid());
        Files.writeString(Path.of("target", "thread-pids.txt"),
                ProcessHandle.current().pid() + "\n"
                        + all.stream().map(String::valueOf).collect(Collectors.joining(" ")) + "\n");
    }
}
