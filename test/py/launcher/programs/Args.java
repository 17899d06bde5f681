// Prints each argument in brackets, one a line, then a property if asked.
public class Args {
    public static void main(String[] args) {
        for (String a : args) {
            System.out.println("[" + a + "]");
        }
        String p = System.getProperty("djava.test.prop");
        if (p != null) {
            System.out.println("prop=[" + p + "]");
        }
    }
}
