/*
 * @test
 * @summary A thread's eetop (HotSpot's pointer to its native thread, shared as "alive") is
 *          a pointer only in the VM running the thread: main reads 1 for a live remote thread
 *          (never the server's address, which may be one of main's own threads) and 0 once it
 *          ended, while the thread itself reads its real one; isAlive and interrupt follow.
 * @library /lib
 * @run main/othervm NativeThreadPointers
 */
import java.lang.reflect.Field;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import sun.misc.Unsafe;

public class NativeThreadPointers {
    public static void main(String[] args) throws Exception {
        Field theUnsafe = Unsafe.class.getDeclaredField("theUnsafe");
        theUnsafe.setAccessible(true);
        Unsafe unsafe = (Unsafe) theUnsafe.get(null);
        long eetop = unsafe.objectFieldOffset(Thread.class.getDeclaredField("eetop"));

        CountDownLatch started = new CountDownLatch(1);
        long[] own = new long[1];
        long[] pid = new long[1];
        boolean[] interrupted = new boolean[1];
        Thread worker = new Thread(() -> {
            own[0] = unsafe.getLong(Thread.currentThread(), eetop);
            pid[0] = ProcessHandle.current().pid();
            started.countDown();
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                interrupted[0] = true;
            }
        }, "worker");
        worker.start();
        Checks c = new Checks("NativeThreadPointers");
        c.check(started.await(60, TimeUnit.SECONDS), "the worker did not start within 60 s");
        c.check(pid[0] != ProcessHandle.current().pid(), "the worker ran in the launcher");
        c.equal("main's eetop of the live remote worker", unsafe.getLong(worker, eetop), 1L);
        c.check(worker.isAlive(), "the live worker is not alive for main");
        worker.interrupt();
        Threads.joinAll(worker);
        c.check(own[0] != 0 && own[0] != 1 && own[0] % 8 == 0,
                "the worker's own eetop is " + own[0] + ", not its native thread's address");
        c.check(interrupted[0], "the worker's sleep was not interrupted");
        c.equal("main's eetop of the ended worker", unsafe.getLong(worker, eetop), 0L);
        c.check(!worker.isAlive(), "the ended worker is alive for main");
        c.done();
    }
}
