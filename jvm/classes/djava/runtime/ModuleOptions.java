/*
 * djava: a program's module options on a thread server. What --add-opens,
 * --add-exports and --add-reads give the program's classes on its launcher
 * (its unnamed module there: ALL-UNNAMED) they give the program's loader's
 * unnamed module here, when the server first runs one of the program's
 * threads; white-box code that reads a JDK package's internals then works on
 * every node. --add-modules cannot add to a running VM's boot layer: a
 * module a program adds that this node's boot layer lacks is reported.
 */
package djava.runtime;

import java.util.List;
import java.util.Optional;

final class ModuleOptions {
    private ModuleOptions() {}

    /** Applies {@code options} ("KIND VALUE", Node.moduleOptions) for program's loader. */
    static void apply(long program, ClassLoader loader, List<String> options) {
        for (String option : options) {
            int space = option.indexOf(' ');
            String kind = space < 0 ? option : option.substring(0, space);
            String value = space < 0 ? "" : option.substring(space + 1);
            try {
                switch (kind) {
                    case "addopens":
                    case "addexports":
                        openPackages(loader, value, kind.equals("addopens"));
                        break;
                    case "addreads":
                        addReads(loader, value);
                        break;
                    case "addmods":
                        for (String name : value.split(",")) {
                            if (!name.startsWith("ALL-") && module(name, loader).isEmpty()) {
                                report(program, option, "this node's boot layer has no module " + name);
                            }
                        }
                        break;
                    default:
                        report(program, option, "an unknown module option");
                }
            } catch (RuntimeException e) {
                report(program, option, e.toString());
            }
        }
    }

    // MODULE/PACKAGE=TARGET(,TARGET)*
    private static void openPackages(ClassLoader loader, String value, boolean open) {
        int slash = value.indexOf('/');
        int equals = value.indexOf('=');
        if (slash < 0 || equals < slash) {
            throw new IllegalArgumentException("not MODULE/PACKAGE=TARGET");
        }
        Module source = module(value.substring(0, slash), loader).orElseThrow(
                () -> new IllegalArgumentException("no module " + value.substring(0, value.indexOf('/'))));
        String pn = value.substring(slash + 1, equals);
        for (String target : value.substring(equals + 1).split(",")) {
            Optional<Module> other = module(target, loader);
            if (other.isPresent()) {
                Node.openPackage(source, pn, other.get(), open);
            }
        }
    }

    // MODULE=TARGET(,TARGET)*
    private static void addReads(ClassLoader loader, String value) {
        int equals = value.indexOf('=');
        if (equals < 0) {
            throw new IllegalArgumentException("not MODULE=TARGET");
        }
        Module source = module(value.substring(0, equals), loader).orElseThrow(
                () -> new IllegalArgumentException("no module " + value.substring(0, value.indexOf('='))));
        for (String target : value.substring(equals + 1).split(",")) {
            module(target, loader).ifPresent(other -> Node.addReads(source, other));
        }
    }

    /** A module of this node's boot layer, or the program's unnamed module for ALL-UNNAMED. */
    private static Optional<Module> module(String name, ClassLoader loader) {
        if (name.equals("ALL-UNNAMED")) {
            return Optional.of(loader.getUnnamedModule());
        }
        return ModuleLayer.boot().findModule(name);
    }

    private static void report(long program, String option, String why) {
        System.err.println("thread-server " + Node.nodeName() + ": program " + Long.toUnsignedString(program)
                + ": module option " + option + " does not apply here: " + why);
    }
}
