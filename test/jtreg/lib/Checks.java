import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Collects a test's failed checks and reports them all at once, so that one broken property
 * does not hide the others: {@link #done()} throws an AssertionError listing each.
 */
public final class Checks {
    private final String test;
    private final List<String> failures = new ArrayList<>();

    public Checks(String test) {
        this.test = test;
    }

    public void check(boolean ok, String message) {
        if (!ok) {
            failures.add(message);
        }
    }

    public void equal(String what, long actual, long expected) {
        check(actual == expected, what + " is " + actual + ", expected " + expected);
    }

    public void equal(String what, Object actual, Object expected) {
        check(Objects.equals(actual, expected), what + " is " + actual + ", expected " + expected);
    }

    public void fail(String message) {
        failures.add(message);
    }

    public boolean ok() {
        return failures.isEmpty();
    }

    public void done() {
        if (!failures.isEmpty()) {
            StringBuilder sb = new StringBuilder(test + ": " + failures.size() + " check(s) failed:");
            for (String f : failures) {
                sb.append("\n  - ").append(f);
            }
            throw new AssertionError(sb.toString());
        }
        System.out.println(test + ": all checks passed");
    }
}
