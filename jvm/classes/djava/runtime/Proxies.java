/*
 * djava: the Java half of making a dynamic proxy's class on a node that
 * received a proxy object (HotSpot's dso/dsoProxy.cpp resolves its
 * interfaces and asks this class for the proxy class).
 */
package djava.runtime;

import java.lang.reflect.Proxy;

final class Proxies {
    private Proxies() {}

    /**
     * Called by the VM: the proxy class of these interfaces in that loader,
     * the one every proxy of them made there has (Proxy keeps one per loader
     * and interface list).
     */
    @SuppressWarnings("deprecation")  // what Proxy.newProxyInstance makes, without an instance
    static Class<?> classFor(ClassLoader loader, Class<?>[] interfaces) {
        return Proxy.getProxyClass(loader, interfaces);
    }
}
