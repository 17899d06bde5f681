/*
 * @test
 * @summary CompletableFuture's delays (delayedExecutor, completeOnTimeout, orTimeout) used by a
 *          program's thread on a thread server run in time, in that program and in a later one
 *          on the same servers: the scheduler is the program's (its launcher's), not one the
 *          server keeps for every program, whose thread belonged to the first program that
 *          used it and was stopped when it ended. Each program's main runs on its launcher (a
 *          child djava JVM).
 * @library /lib
 * @run main/othervm DelayedTasksAcrossPrograms
 */
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

public class DelayedTasksAcrossPrograms {
    static volatile String seen;

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            DjavaChild.runOnLauncher(DelayedTasksAcrossPrograms.class, 300);
            DjavaChild.runOnLauncher(DelayedTasksAcrossPrograms.class, 300);  // a later program
            return;
        }
        Checks c = new Checks("DelayedTasksAcrossPrograms (launcher)");
        Thread t = new Thread(() -> {
            try {
                int delayed = CompletableFuture.supplyAsync(() -> 1,
                        CompletableFuture.delayedExecutor(20, TimeUnit.MILLISECONDS)).get(30, TimeUnit.SECONDS);
                int completed = new CompletableFuture<Integer>()
                        .completeOnTimeout(2, 20, TimeUnit.MILLISECONDS).get(30, TimeUnit.SECONDS);
                String timedOut;
                try {
                    new CompletableFuture<Integer>().orTimeout(20, TimeUnit.MILLISECONDS)
                            .get(30, TimeUnit.SECONDS);
                    timedOut = "completed";
                } catch (java.util.concurrent.ExecutionException e) {
                    timedOut = e.getCause().getClass().getSimpleName();
                }
                seen = delayed + " " + completed + " " + timedOut;
            } catch (TimeoutException e) {
                seen = "a delay never ran: " + e;
            } catch (Exception e) {
                seen = e.toString();
            }
        });
        t.start();
        t.join();
        c.equal("the delays on a thread elsewhere", seen, "1 2 TimeoutException");
        c.done();
        System.out.println("DelayedTasksAcrossPrograms (launcher): ok");
    }
}
