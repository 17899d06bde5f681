/*
 * djava: the Java half of java.lang.invoke and java.lang.reflect values travelling by name
 * (HotSpot's dso/dsoHandles.hpp names them when they leave a node and asks
 * this class for this node's handle when one arrives).
 */
package djava.runtime;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandleInfo;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.lang.reflect.AccessibleObject;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;

final class Handles {
    private Handles() {}

    /** What this node made, per class loader (the boot loader's under null), by name. */
    private static final Map<ClassLoader, Map<String, Object>> MADE = new WeakHashMap<>();

    /**
     * Called by the VM with a name (dsoHandles.hpp) and the program's class
     * loader: this node's handle of that name, the same object every time.
     */
    static Object resolve(String name, ClassLoader loader) throws Throwable {
        Map<String, Object> made;
        synchronized (MADE) {
            made = MADE.computeIfAbsent(loader, l -> new ConcurrentHashMap<>());
        }
        Object handle = made.get(name);
        if (handle == null) {
            handle = make(name, loader);
            Object first = made.putIfAbsent(name, handle);
            if (first != null) {
                handle = first;
            }
        }
        return handle;
    }

    private static Object make(String name, ClassLoader loader) throws Throwable {
        String[] part = name.split(":", -1);
        if (part.length >= 3 && part[0].equals("H") && part[1].equals("T")) {
            return MethodType.fromMethodDescriptorString(name.substring(4), loader);
        }
        if (part.length == 6 && part[1].equals("V")) {
            boolean exact = part[3].equals("1");
            Class<?> c = load(part[4], loader);
            VarHandle vh;
            switch (part[2]) {
                case "I": {
                    Field f = field(c, part[5]);
                    vh = lookupIn(f.getDeclaringClass()).findVarHandle(c, part[5], f.getType());
                    break;
                }
                case "S": {
                    Field f = field(c, part[5]);
                    vh = lookupIn(c).findStaticVarHandle(c, part[5], f.getType());
                    break;
                }
                case "A":
                    vh = MethodHandles.arrayElementVarHandle(c);
                    break;
                default:
                    throw malformed(name);
            }
            return exact ? vh.withInvokeExactBehavior() : vh;
        }
        if (part.length == 5 && part[1].equals("F")) {
            return accessible(load(part[3], loader).getDeclaredField(part[4]), part[2]);
        }
        if (part.length == 6 && part[1].equals("R")) {
            Class<?> c = load(part[3], loader);
            for (Method m : c.getDeclaredMethods()) {
                if (m.getName().equals(part[4])
                        && descriptor(m.getParameterTypes(), m.getReturnType()).equals(part[5])) {
                    return accessible(m, part[2]);
                }
            }
            throw new NoSuchMethodException(c.getName() + "." + part[4] + part[5]);
        }
        if (part.length == 5 && part[1].equals("N")) {
            Class<?> c = load(part[3], loader);
            for (Constructor<?> k : c.getDeclaredConstructors()) {
                if (descriptor(k.getParameterTypes(), void.class).equals(part[4])) {
                    return accessible(k, part[2]);
                }
            }
            throw new NoSuchMethodException(c.getName() + ".<init>" + part[4]);
        }
        if (part.length == 6 && part[1].equals("M")) {
            int kind = Integer.parseInt(part[2]);
            Class<?> c = load(part[3], loader);
            String member = part[4];
            String descriptor = part[5];
            MethodHandles.Lookup l = lookupIn(c);
            switch (kind) {
                case MethodHandleInfo.REF_getField:
                    return l.findGetter(c, member, fieldType(descriptor, loader));
                case MethodHandleInfo.REF_getStatic:
                    return l.findStaticGetter(c, member, fieldType(descriptor, loader));
                case MethodHandleInfo.REF_putField:
                    return l.findSetter(c, member, fieldType(descriptor, loader));
                case MethodHandleInfo.REF_putStatic:
                    return l.findStaticSetter(c, member, fieldType(descriptor, loader));
                case MethodHandleInfo.REF_invokeStatic:
                    return l.findStatic(c, member, MethodType.fromMethodDescriptorString(descriptor, loader));
                case MethodHandleInfo.REF_invokeVirtual:
                case MethodHandleInfo.REF_invokeInterface:
                    return l.findVirtual(c, member, MethodType.fromMethodDescriptorString(descriptor, loader));
                case MethodHandleInfo.REF_invokeSpecial:
                    return l.findSpecial(c, member, MethodType.fromMethodDescriptorString(descriptor, loader), c);
                case MethodHandleInfo.REF_newInvokeSpecial:
                    return l.findConstructor(c, MethodType.fromMethodDescriptorString(descriptor, loader));
                default:
                    throw malformed(name);
            }
        }
        throw malformed(name);
    }

    /**
     * The member, made accessible if the original was: the node that made the original passed
     * the access check, and the program's module options hold here too.
     */
    private static AccessibleObject accessible(AccessibleObject member, String flag) {
        if (flag.equals("1")) {
            member.setAccessible(true);
        }
        return member;
    }

    private static String descriptor(Class<?>[] parameters, Class<?> result) {
        return MethodType.methodType(result, parameters).toMethodDescriptorString();
    }

    private static MethodHandles.Lookup lookupIn(Class<?> c) throws IllegalAccessException {
        return MethodHandles.privateLookupIn(c, MethodHandles.lookup());
    }

    private static Class<?> load(String internalName, ClassLoader loader) throws ClassNotFoundException {
        return Class.forName(internalName.replace('/', '.'), false, loader);
    }

    /** The field c declares or inherits from a superclass. */
    private static Field field(Class<?> c, String name) throws NoSuchFieldException {
        for (Class<?> k = c; k != null; k = k.getSuperclass()) {
            for (Field f : k.getDeclaredFields()) {
                if (f.getName().equals(name)) {
                    return f;
                }
            }
        }
        throw new NoSuchFieldException(c.getName() + "." + name);
    }

    private static Class<?> fieldType(String descriptor, ClassLoader loader) {
        return MethodType.fromMethodDescriptorString("(" + descriptor + ")V", loader).parameterType(0);
    }

    private static InternalError malformed(String name) {
        return new InternalError("djava: a malformed name of a java.lang.invoke value: " + name);
    }
}
