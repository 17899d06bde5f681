/*
 * @test
 * @summary Compiled code that speculated an access site local is right when a shared object
 *          comes: methods that read and write a field and an array element, hot on local
 *          objects only (so C2, where it compiles, tests those sites with a trap instead of
 *          the whole check), then get objects another node wrote. They read that node's
 *          values, and that node reads what they wrote.
 * @library /lib
 * @run main/othervm -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,AccessSites::*
 *                   CompiledSpeculationOnLocalSites
 */
public class CompiledSpeculationOnLocalSites {
    static final int WARM_UP = 200_000;  // past C2's thresholds, tiered or alone

    static long warmUp() {
        return AccessSites.warmUp(new AccessSites.Cell(), new long[16], WARM_UP);
    }

    public static void main(String[] args) throws Exception {
        Checks checks = new Checks("CompiledSpeculationOnLocalSites");
        long sink = warmUp();
        Thread.sleep(1000);  // the compilers' queue drains
        sink += warmUp();

        AccessSites.Cell shared = new AccessSites.Cell();
        long[] values = new long[16];
        Thread writer = new Thread(() -> {
            shared.a = 40;
            shared.b = 2;
            values[5] = 55;
        }, "writer");
        writer.start();
        writer.join();
        checks.equal("sum of a cell another node wrote", AccessSites.sum(shared), 42L);
        checks.equal("an element another node wrote", AccessSites.element(values, 5), 55L);

        AccessSites.bump(shared, 8);
        AccessSites.setElement(values, 6, 66);
        long[] seen = new long[3];
        Thread reader = new Thread(() -> {
            seen[0] = shared.a;
            seen[1] = shared.b;
            seen[2] = values[6];
        }, "reader");
        reader.start();
        reader.join();
        checks.equal("the other node's a after bump", seen[0], 48L);
        checks.equal("the other node's b after bump", seen[1], -6L);
        checks.equal("the other node's element after setElement", seen[2], 66L);
        checks.check(sink != 1, "warm-up ran");
        checks.done();
        System.out.println("CompiledSpeculationOnLocalSites: ok");
    }
}
