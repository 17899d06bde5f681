// Dies of an uncaught exception thrown two frames deep.
public class Boom {
    static void fail(String why) {
        throw new IllegalStateException(why);
    }

    public static void main(String[] args) {
        System.out.println("about to fail");
        fail("boom: " + String.join(" ", args));
    }
}
