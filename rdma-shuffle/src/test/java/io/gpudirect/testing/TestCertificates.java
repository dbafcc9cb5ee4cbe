package io.gpudirect.testing;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Self-signed TLS certificates made at test time with the JDK's {@code keytool}, for
 * {@code localhost} and {@code 127.0.0.1}, written as the PEM files the server and client
 * read. No private key is ever committed: each one lives in a test's temporary directory.
 */
public record TestCertificates(Path certificate, Path privateKey) {
  private static final String PASSWORD = "test-only";

  /** A fresh key pair and certificate below {@code dir}, named {@code name}. */
  public static TestCertificates create(Path dir, String name) throws IOException {
    return create(dir, name, List.of());
  }

  /**
   * As above, the certificate also naming {@code hosts} (names or IP addresses): for servers
   * reached by this machine's own name, as a Spark cluster's executors are.
   */
  public static TestCertificates create(Path dir, String name, List<String> hosts) throws IOException {
    StringBuilder san = new StringBuilder("SAN=dns:localhost,ip:127.0.0.1");
    for (String host : hosts) {
      san.append(host.matches("[0-9.]+|.*:.*") ? ",ip:" : ",dns:").append(host);
    }
    Files.createDirectories(dir);
    Path store = dir.resolve(name + ".p12");
    Files.deleteIfExists(store);
    Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
    Process p = new ProcessBuilder(keytool.toString(), "-genkeypair", "-alias", name,
        "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
        "-ext", san.toString(), "-validity", "2",
        "-storetype", "PKCS12", "-keystore", store.toString(),
        "-storepass", PASSWORD, "-keypass", PASSWORD)
        .redirectErrorStream(true).start();
    try {
      if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
        p.destroyForcibly();
        throw new IOException("keytool failed: " + new String(p.getInputStream().readAllBytes(),
            StandardCharsets.UTF_8));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while keytool ran", e);
    }
    try (InputStream in = Files.newInputStream(store)) {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(in, PASSWORD.toCharArray());
      Key key = ks.getKey(name, PASSWORD.toCharArray());
      Certificate cert = ks.getCertificate(name);
      Path certPem = dir.resolve(name + "-cert.pem");
      Path keyPem = dir.resolve(name + "-key.pem");
      Files.writeString(certPem, pem("CERTIFICATE", cert.getEncoded()));
      Files.writeString(keyPem, pem("PRIVATE KEY", key.getEncoded()));
      Files.delete(store);
      return new TestCertificates(certPem, keyPem);
    } catch (GeneralSecurityException e) {
      throw new IOException("cannot read the keystore keytool made: " + e, e);
    }
  }

  static String pem(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
        + "\n-----END " + type + "-----\n";
  }
}
