/*
 * @test
 * @summary The JDK under test runs djava's VM (the server VM by default, Zero with -zero),
 *          which names its version and commit, on the pinned 17.0.19 class library. A cluster
 *          node on the server VM compiles with C1 alone ("emulated-client") unless told to
 *          use C2 as well (-XX:+DjavaCompileWithC2, whose code carries the checks too).
 * @run main/othervm VmIdentity
 */
public class VmIdentity {
    public static void main(String[] args) {
        String vmOptions = " " + System.getProperty("test.vm.opts", "") + " ";
        boolean server = !vmOptions.contains(" -zero ");
        boolean node = vmOptions.contains(" -XX:+DistributedJava ");
        boolean c2 = vmOptions.contains(" -XX:+DjavaCompileWithC2 ");
        check("java.vm.name", server ? "djava 64-Bit Server VM" : "djava 64-Bit Zero VM");
        check("java.version", "17.0.19");
        String mode = !server || vmOptions.contains(" -Xint ") ? "interpreted mode"
                    : vmOptions.contains(" -Xcomp ") ? "compiled mode" : "mixed mode";
        check("java.vm.info", server && node && !c2 && !mode.startsWith("interpreted")
                              ? mode + ", emulated-client" : mode);
        String vmVersion = System.getProperty("java.vm.version");
        if (!vmVersion.matches("17\\.0\\.19\\+10-djava-\\d+\\.\\d+\\.\\d+-([0-9a-f]{12}|unknown)(-dirty)?")) {
            throw new AssertionError("java.vm.version does not name a djava build: " + vmVersion);
        }
    }

    static void check(String property, String expected) {
        String actual = System.getProperty(property);
        if (!expected.equals(actual)) {
            throw new AssertionError(property + " is '" + actual + "', expected '" + expected + "'");
        }
    }
}
