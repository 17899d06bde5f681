import java.io.BufferedReader;
import java.io.InputStreamReader;

// Copies standard input to standard output, upper-cased, line by line.
public class Echo {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        int lines = 0;
        for (String line; (line = in.readLine()) != null; lines++) {
            System.out.println(line.toUpperCase());
        }
        System.err.println(lines + " lines");
    }
}
