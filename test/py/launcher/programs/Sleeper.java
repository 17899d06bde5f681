// Says it is ready, then sleeps until a signal ends the VM; the shutdown hook
// shows that the VM shut down in order.
public class Sleeper {
    public static void main(String[] args) throws Exception {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> System.out.println("hook ran")));
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(60_000);
        System.out.println("slept through");
    }
}
