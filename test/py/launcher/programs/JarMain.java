// The Main-Class of a jar: shows its arguments and where it was loaded from.
public class JarMain {
    public static void main(String[] args) {
        System.out.println("jar main " + args.length + " " + String.join("|", args));
        System.out.println(JarMain.class.getProtectionDomain().getCodeSource().getLocation()
                .getPath().endsWith("app.jar"));
    }
}
