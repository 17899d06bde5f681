/*
 * djava: the Java half of re-linking a lambda's call site on a node that
 * received a lambda object (HotSpot's dso/dsoLambda.cpp does the linking,
 * as it links any invokedynamic, and asks this class for the class the
 * call site makes).
 */
package djava.runtime;

import java.lang.invoke.CallSite;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodType;
import java.lang.reflect.Array;

final class Lambdas {
    private Lambdas() {}

    /**
     * Called by the VM with what linking a LambdaMetafactory call site gave
     * (its target, or the call site): the class of the objects it makes.
     * Makes one, capturing zeros and nulls; the metafactory's classes only
     * store their captured arguments when made.
     */
    static Class<?> classMadeBy(Object linked) throws Throwable {
        MethodHandle factory = linked instanceof CallSite ? ((CallSite) linked).dynamicInvoker()
                                                          : (MethodHandle) linked;
        MethodType type = factory.type();
        Object[] captured = new Object[type.parameterCount()];
        for (int i = 0; i < captured.length; i++) {
            Class<?> p = type.parameterType(i);
            if (p.isPrimitive()) {
                captured[i] = Array.get(Array.newInstance(p, 1), 0);
            }
        }
        Object made = factory.invokeWithArguments(captured);
        if (made == null) {
            throw new IllegalStateException("djava: a lambda's call site made null");
        }
        return made.getClass();
    }
}
