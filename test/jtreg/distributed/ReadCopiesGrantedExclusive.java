/*
 * @test
 * @summary Objects two nodes take turns to read and then write (migratory: the directory
 *          answers a read with the only copy) keep their values when the reading node then
 *          drops every reference to them and collects: a node that was granted the only copy
 *          by a read holds it until the other node asks for it back.
 * @library /lib
 * @run main/othervm ReadCopiesGrantedExclusive
 */
public class ReadCopiesGrantedExclusive {
    static final int ROUNDS = 12;
    static final int CELLS = 64;

    static final class Cell {
        int value;
    }

    /** What the two threads share: the cells of a round, and whose turn it is. */
    static final class Table {
        Cell[] cells;
        int step;
        long readerSum;
        String failure;

        synchronized void await(int s) throws InterruptedException {
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (step != s) {
                if (failure != null) {
                    throw new IllegalStateException("the other thread failed");
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("step " + s + " never came (at " + step + ")");
                }
                wait(left / 1_000_000 + 1);
            }
        }

        synchronized void fail(Thread t, Throwable e) {
            if (failure == null) {
                failure = t.getName() + ": " + e;
            }
            notifyAll();
        }

        synchronized void next() {
            step++;
            notifyAll();
        }
    }

    static final class Reader extends Thread {
        final Table table;
        long pid;

        Reader(Table table) {
            super("reader");
            this.table = table;
        }

        @Override
        public void run() {
            pid = ProcessHandle.current().pid();
            try {
                for (int r = 0; r < ROUNDS; r++) {
                    int base = r * 10;
                    table.await(base + 1);
                    increment();
                    table.next();
                    table.await(base + 3);
                    increment();
                    table.next();
                    table.await(base + 5);
                    long sum = readAll();
                    synchronized (table) {
                        table.readerSum += sum;
                    }
                    table.next();
                    table.await(base + 7);
                    // The writer took the cells out of the table: nothing here references
                    // them any more, and a collection takes their replicas.
                    if (table.cells != null) {
                        throw new IllegalStateException("round " + r + ": the cells are still there");
                    }
                    System.gc();
                    System.gc();
                    table.next();
                }
            } catch (Throwable e) {
                e.printStackTrace();
                table.fail(this, e);
            }
        }

        void increment() {
            for (Cell c : table.cells) {
                c.value++;
            }
        }

        long readAll() {
            long sum = 0;
            for (Cell c : table.cells) {
                sum += c.value;
            }
            return sum;
        }
    }

    static final class Writer extends Thread {
        final Table table;
        long pid;
        int wrong;
        String firstWrong;

        Writer(Table table) {
            super("writer");
            this.table = table;
        }

        @Override
        public void run() {
            pid = ProcessHandle.current().pid();
            try {
                for (int r = 0; r < ROUNDS; r++) {
                    int base = r * 10;
                    table.await(base);
                    Cell[] mine = new Cell[CELLS];
                    for (int i = 0; i < CELLS; i++) {
                        mine[i] = new Cell();
                    }
                    table.cells = mine;
                    table.next();
                    table.await(base + 2);
                    for (Cell c : mine) {
                        c.value++;
                    }
                    table.next();
                    table.await(base + 4);
                    for (Cell c : mine) {
                        c.value++;
                    }
                    table.next();
                    table.await(base + 6);
                    table.cells = null;
                    table.next();
                    table.await(base + 8);
                    // Each read asks the reader's node for the only copy.
                    for (int i = 0; i < CELLS; i++) {
                        if (mine[i].value != 4 && wrong++ == 0) {
                            firstWrong = "round " + r + ", cell " + i + ": " + mine[i].value;
                        }
                    }
                    synchronized (table) {
                        table.step = base + 10;
                        table.notifyAll();
                    }
                }
            } catch (Throwable e) {
                e.printStackTrace();
                table.fail(this, e);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Checks c = new Checks("ReadCopiesGrantedExclusive");
        Table table = new Table();
        Reader reader = new Reader(table);
        Writer writer = new Writer(table);
        Threads.startAll(reader, writer);
        Threads.joinAll(120, reader, writer);
        if (Integer.getInteger("djava.test.threadServers", 0) >= 2) {
            c.check(reader.pid != writer.pid, "the reader and the writer ran on one node");
        }
        c.check(writer.wrong == 0, writer.wrong + " cells lost their value, first " + writer.firstWrong);
        synchronized (table) {
            c.check(table.failure == null, "a thread failed: " + table.failure);
            c.equal("the reader's sums", table.readerSum, (long) ROUNDS * CELLS * 4);
        }
        c.done();
    }
}
