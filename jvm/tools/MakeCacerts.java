import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;

/**
 * Builds the JDK image's lib/security/cacerts from the machine's PEM bundle at
 * build time. Debian's package links cacerts to /etc/ssl/certs/java/cacerts,
 * which only exists where a system JDK is installed; the djava image must not
 * depend on that at run time.
 *
 * It writes JKS, as OpenJDK's and Debian's cacerts are: PKCS12 would protect the
 * certificates with a password that the default trust store loading lacks.
 *
 * usage: java MakeCacerts.java BUNDLE.pem OUT
 */
public class MakeCacerts {
    public static void main(String[] args) throws Exception {
        KeyStore store = KeyStore.getInstance("JKS");
        store.load(null, null);
        CertificateFactory factory = CertificateFactory.getInstance("X.509");
        int count = 0;
        try (FileInputStream in = new FileInputStream(args[0])) {
            for (Certificate cert : factory.generateCertificates(in)) {
                X509Certificate x509 = (X509Certificate) cert;
                String alias = x509.getSubjectX500Principal().getName() + " #" + count++;
                store.setCertificateEntry(alias, x509);
            }
        }
        if (count == 0) {
            throw new IllegalStateException("no certificates in " + args[0]);
        }
        try (FileOutputStream out = new FileOutputStream(args[1])) {
            store.store(out, "changeit".toCharArray());
        }
        System.out.println("cacerts: " + count + " certificates");
    }
}
