/**
 * The seed's ray tracer shape (transparent-distributed-java-1997, section
 * 5.3): a small scene of spheres rendered by bands of scan lines, one band
 * to a thread, with a vector class that allocates a new object for every
 * arithmetic operation. Every object in the seed went to the server, so its
 * tracer never sped up; here those temporaries never leave their thread.
 * Only the scene (read) and the image rows (each written by one thread) are
 * shared. Checks its image against a single-threaded render.
 *
 * usage: java RayTracer [SIZE] [THREADS]
 */
public class RayTracer {
    /** Immutable 3-vector: every operation makes a new one, on purpose. */
    static final class Vec {
        final double x, y, z;
        Vec(double x, double y, double z) { this.x = x; this.y = y; this.z = z; }
        Vec add(Vec o) { return new Vec(x + o.x, y + o.y, z + o.z); }
        Vec sub(Vec o) { return new Vec(x - o.x, y - o.y, z - o.z); }
        Vec scale(double k) { return new Vec(x * k, y * k, z * k); }
        double dot(Vec o) { return x * o.x + y * o.y + z * o.z; }
        Vec unit() { return scale(1 / Math.sqrt(dot(this))); }
    }

    static final class Sphere {
        final Vec centre;
        final double radius;
        final double shade;
        Sphere(Vec centre, double radius, double shade) {
            this.centre = centre; this.radius = radius; this.shade = shade;
        }
        /** Distance along the ray to the first hit, or +inf. */
        double hit(Vec origin, Vec dir) {
            Vec oc = origin.sub(centre);
            double b = oc.dot(dir), c = oc.dot(oc) - radius * radius, disc = b * b - c;
            if (disc < 0) return Double.POSITIVE_INFINITY;
            double t = -b - Math.sqrt(disc);
            return t > 1e-6 ? t : Double.POSITIVE_INFINITY;
        }
    }

    static final Vec LIGHT = new Vec(-1, 1, -1).unit();

    static Sphere[] scene() {
        return new Sphere[] {
            new Sphere(new Vec(0, -1000, 0), 999, 0.4),
            new Sphere(new Vec(0, 0, 5), 1, 0.9),
            new Sphere(new Vec(-1.5, -0.3, 4), 0.6, 0.7),
            new Sphere(new Vec(1.6, 0.2, 6), 0.9, 0.8),
        };
    }

    static int trace(Sphere[] scene, Vec origin, Vec dir, int depth) {
        double nearest = Double.POSITIVE_INFINITY;
        Sphere hit = null;
        for (Sphere s : scene) {
            double t = s.hit(origin, dir);
            if (t < nearest) { nearest = t; hit = s; }
        }
        if (hit == null) return 20;
        Vec point = origin.add(dir.scale(nearest));
        Vec normal = point.sub(hit.centre).unit();
        double light = Math.max(0, normal.dot(LIGHT));
        for (Sphere s : scene) {
            if (s.hit(point, LIGHT) < Double.POSITIVE_INFINITY) { light *= 0.3; break; }
        }
        int colour = (int) (255 * hit.shade * (0.2 + 0.8 * light));
        if (depth < 2) {
            Vec reflected = dir.sub(normal.scale(2 * dir.dot(normal)));
            colour = (colour * 3 + trace(scene, point, reflected, depth + 1)) / 4;
        }
        return colour;
    }

    static void render(Sphere[] scene, int[][] image, int from, int to) {
        int size = image.length;
        Vec eye = new Vec(0, 0, 0);
        for (int y = from; y < to; y++) {
            int[] row = new int[size];  // filled locally, then stored: one shared write a row
            for (int x = 0; x < size; x++) {
                Vec dir = new Vec((x - size / 2.0) / size, (size / 2.0 - y) / size, 1).unit();
                row[x] = trace(scene, eye, dir, 0);
            }
            image[y] = row;
        }
    }

    public static void main(String[] args) throws Exception {
        int size = args.length > 0 ? Integer.parseInt(args[0]) : 120;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        Sphere[] scene = scene();
        int[][] image = new int[size][];
        long start = System.nanoTime();
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            int from = size * t / threads, to = size * (t + 1) / threads;
            workers[t] = new Thread(() -> render(scene, image, from, to), "band-" + t);
            workers[t].start();
        }
        for (Thread w : workers) w.join();
        long elapsed = System.nanoTime() - start;
        int[][] expected = new int[size][];
        render(scene(), expected, 0, size);
        long checksum = 0;
        for (int y = 0; y < size; y++) {
            for (int x = 0; x < size; x++) {
                if (image[y][x] != expected[y][x]) {
                    System.out.println("WRONG at " + x + "," + y + ": " + image[y][x] + " != " + expected[y][x]);
                    System.exit(1);
                }
                checksum += (long) image[y][x] * (x + 1);
            }
        }
        System.out.printf("ray tracer %dx%d by %d threads: correct (checksum %d), %.1f ms%n",
                size, size, threads, checksum, elapsed / 1e6);
    }
}
