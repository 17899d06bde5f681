// Compiled apart from Dist (not on the launcher's class path): Dist defines
// it at run time, so no thread server can load it.
public class Hidden extends Thread {
    @Override public void run() {
        System.out.println("hidden ran");
    }
}
