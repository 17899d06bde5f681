// Prints its pid and those of its parent's children (under djava's private
// cluster: the daemons and this JVM), then exits with the status given, or
// with "sleep" says it is ready and sleeps until a signal ends the VM.
public class Family {
    public static void main(String[] args) throws Exception {
        ProcessHandle me = ProcessHandle.current();
        StringBuilder line = new StringBuilder("family " + me.pid() + ":");
        me.parent().ifPresent(p -> p.children().forEach(c -> line.append(' ').append(c.pid())));
        System.out.println(line);
        if (args.length > 0 && args[0].equals("sleep")) {
            Runtime.getRuntime().addShutdownHook(new Hook());
            System.out.println("ready");
            System.out.flush();
            Thread.sleep(60_000);
            System.out.println("slept through");
        } else if (args.length > 0) {
            System.exit(Integer.parseInt(args[0]));
        }
    }

    // A named class: a lambda's class is hidden, and cannot be shared.
    static class Hook extends Thread {
        @Override
        public void run() {
            System.out.println("hook ran");
        }
    }
}
