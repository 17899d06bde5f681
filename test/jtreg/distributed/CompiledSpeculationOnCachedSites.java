/*
 * @test
 * @summary Compiled code that speculated an access site's replicas pass the cached test is right
 *          when one does not: methods that read and write a field and an array element, hot
 *          on shared objects this node holds modified (so C2, where it compiles, tests those
 *          sites inline and traps on a miss instead of calling the slow path), then meet the
 *          objects after another node wrote them, and write them while another node holds a
 *          copy. They read that node's values, and that node reads what they wrote.
 * @library /lib
 * @run main/othervm -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,AccessSites::*
 *                   CompiledSpeculationOnCachedSites
 */
public class CompiledSpeculationOnCachedSites {
    static final int WARM_UP = 200_000;  // past C2's thresholds, tiered or alone

    static void onAnotherNode(String name, Runnable r) throws InterruptedException {
        Thread t = new Thread(r, name);
        t.start();
        t.join();
    }

    public static void main(String[] args) throws Exception {
        Checks checks = new Checks("CompiledSpeculationOnCachedSites");
        AccessSites.Cell shared = new AccessSites.Cell();
        long[] values = new long[16];
        // Shared: a thread elsewhere reads them (main's node keeps them modified, and
        // every access of the warm-up passes the cached test).
        long[] before = new long[1];
        onAnotherNode("publisher", () -> before[0] = shared.a + values[0]);
        long sink = AccessSites.warmUp(shared, values, WARM_UP);
        Thread.sleep(1000);  // the compilers' queue drains
        sink += AccessSites.warmUp(shared, values, WARM_UP);

        // Another node writes them: this node's copies are gone, and the compiled
        // reads miss.
        onAnotherNode("writer", () -> {
            shared.a = 40;
            shared.b = 2;
            values[5] = 55;
        });
        checks.equal("sum of a cell another node wrote", AccessSites.sum(shared), 42L);
        checks.equal("an element another node wrote", AccessSites.element(values, 5), 55L);

        // Another node reads them: this node's copies are shared, and the compiled
        // writes miss.
        long[] seen = new long[3];
        onAnotherNode("reader", () -> {
            seen[0] = shared.a;
            seen[2] = values[6];
        });
        AccessSites.bump(shared, 8);
        AccessSites.setElement(values, 6, 66);
        onAnotherNode("reader", () -> {
            seen[0] = shared.a;
            seen[1] = shared.b;
            seen[2] = values[6];
        });
        checks.equal("the other node's a after bump", seen[0], 48L);
        checks.equal("the other node's b after bump", seen[1], -6L);
        checks.equal("the other node's element after setElement", seen[2], 66L);
        checks.check(sink != 1 && before[0] == 0, "warm-up ran");
        checks.done();
        System.out.println("CompiledSpeculationOnCachedSites: ok");
    }
}
