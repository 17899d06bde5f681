/*
 * @test
 * @summary Another node reads a shared object whose field references a local object that a
 *          thread here holds locked (and, second, one whose HotSpot monitor is inflated but
 *          idle): the object cannot become shared while locked, so the read waits until the
 *          lock is released, then sees the object as it was left; the holder keeps using the
 *          shared object meanwhile; the object's monitor then works across nodes.
 * @library /lib
 * @run main/othervm LockedReferents
 */
public class LockedReferents {
    static final class Box {
        int value;

        Box(int value) {
            this.value = value;
        }
    }

    static final class Holder {
        Box ref;
        int writes;
    }

    // Shared with the readers through the class's statics; the readers
    // capture nothing, so the boxes reach them only through these.
    static Holder held;
    static Holder inflated;
    static int seenValue;
    static int seenWrites;
    static int seenInflatedValue;

    public static void main(String[] args) throws Exception {
        Checks checks = new Checks("LockedReferents");

        // A box locked by main when the reader asks for the holder.
        held = new Holder();
        Box box = new Box(7);
        Thread reader;
        synchronized (box) {
            held.ref = box;
            reader = new Thread(() -> {
                Box b = held.ref;
                synchronized (b) {
                    seenValue = b.value;
                    seenWrites = held.writes;
                    b.value++;
                }
            }, "reader");
            reader.start();
            Thread.sleep(300);  // the reader asks for the holder meanwhile
            for (int i = 0; i < 100; i++) {
                held.writes++;
                Thread.sleep(1);
            }
            box.value = 8;
        }
        reader.join();
        checks.equal("the box's value the reader saw", seenValue, 8);
        checks.equal("the holder's writes the reader saw", seenWrites, 100);
        synchronized (box) {
            checks.equal("the box's value after the reader's increment", box.value, 9);
        }

        // A box whose monitor HotSpot inflated (by a wait) and no one holds.
        Box idle = new Box(41);
        synchronized (idle) {
            idle.wait(1);
        }
        inflated = new Holder();
        inflated.ref = idle;
        Thread second = new Thread(() -> {
            Box b = inflated.ref;
            synchronized (b) {
                seenInflatedValue = b.value;
                b.value++;
            }
        }, "second reader");
        second.start();
        second.join();
        checks.equal("the idle-monitor box's value the reader saw", seenInflatedValue, 41);
        synchronized (idle) {
            checks.equal("the idle-monitor box's value after the increment", idle.value, 42);
        }
        checks.done();
        System.out.println("LockedReferents: ok");
    }
}
