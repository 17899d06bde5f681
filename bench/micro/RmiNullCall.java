// Java RMI's null call: the JDK's own remote call (the seeds' usual
// comparison for a distributed JVM's latency), a Remote interface's
// void ping() between two processes over loopback. bench/micro/latency.py
// runs both sides on the stock JIT VM (build/jdk/bin/java -server).
//
//   java -cp CLASSES RmiNullCall server
//       exports a Ping on an anonymous port of 127.0.0.1, prints its stub
//       (serialized, Base64) as one line, and serves until stdin closes;
//   java -cp CLASSES RmiNullCall client STUB WARMUP CALLS
//       makes WARMUP calls (the JIT compiles RMI's path), then times CALLS
//       calls one by one: prints "rmi null call p50 X us mean Y us".
//
// The stub travels by the command line, so no registry and no fixed port.
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.rmi.Remote;
import java.rmi.RemoteException;
import java.rmi.server.UnicastRemoteObject;
import java.util.Arrays;
import java.util.Base64;

public class RmiNullCall {
    public interface Ping extends Remote {
        void ping() throws RemoteException;
    }

    static final class Pinged implements Ping {
        public void ping() {}
    }

    /** Held while the server runs: an unreferenced remote object may be collected. */
    static Pinged served;

    public static void main(String[] args) throws Exception {
        if (args[0].equals("server")) {
            serve();
        } else {
            call(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]));
        }
    }

    static void serve() throws Exception {
        System.setProperty("java.rmi.server.hostname", "127.0.0.1");
        served = new Pinged();
        Remote stub = UnicastRemoteObject.exportObject(served, 0);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(stub);
        }
        System.out.println(Base64.getEncoder().encodeToString(bytes.toByteArray()));
        System.out.flush();
        while (System.in.read() >= 0) {
        }
        UnicastRemoteObject.unexportObject(served, true);
        System.exit(0);  // RMI's own threads are not daemons
    }

    static void call(String stub, int warmup, int calls) throws Exception {
        Ping ping;
        try (ObjectInputStream in = new ObjectInputStream(
                new ByteArrayInputStream(Base64.getDecoder().decode(stub)))) {
            ping = (Ping) in.readObject();
        }
        for (int i = 0; i < warmup; i++) {
            ping.ping();
        }
        long[] ns = new long[calls];
        for (int i = 0; i < calls; i++) {
            long t0 = System.nanoTime();
            ping.ping();
            ns[i] = System.nanoTime() - t0;
        }
        double mean = Arrays.stream(ns).average().getAsDouble();
        Arrays.sort(ns);
        System.out.printf("rmi null call p50 %.2f us mean %.2f us%n", ns[calls / 2] / 1e3, mean / 1e3);
        System.exit(0);
    }
}
