// Shows that -Xmx reached the VM: prints whether max heap is within the limit.
public class MaxHeap {
    public static void main(String[] args) {
        long max = Runtime.getRuntime().maxMemory();
        System.out.println("max heap <= 64M: " + (max <= 64L * 1024 * 1024));
    }
}
