// Exits with the status given as its argument, after writing to both streams.
public class Exit {
    public static void main(String[] args) {
        System.out.println("out before exit");
        System.err.println("err before exit");
        System.exit(Integer.parseInt(args[0]));
    }
}
