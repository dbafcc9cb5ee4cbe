package io.gpudirect.tls;

import io.gpudirect.GpuDirectException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS contexts from PEM files, with the JDK alone: the server's certificate chain and its
 * PKCS#8 private key; the client's trusted certificates. Protocols are
 * the JDK's defaults (TLS 1.3 and 1.2; older ones are disabled in {@code java.security}).
 */
public final class TlsContexts {
  private static final Pattern KEY = Pattern.compile(
      "-----BEGIN ([A-Z ]*)PRIVATE KEY-----([^-]*)-----END \\1PRIVATE KEY-----");

  private TlsContexts() {}

  /**
   * The server's context: {@code certificateChain} holds its certificate first, then any
   * intermediates; {@code privateKey} its unencrypted PKCS#8 key ({@code BEGIN PRIVATE KEY}).
   */
  public static SSLContext server(Path certificateChain, Path privateKey) {
    List<X509Certificate> chain = certificates(certificateChain, "--tls-cert");
    PrivateKey key = privateKey(privateKey, certificateChain, chain.get(0).getPublicKey().getAlgorithm());
    checkKeyMatches(key, chain.get(0), privateKey, certificateChain);
    try {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(null, null);
      char[] none = new char[0];
      ks.setKeyEntry("server", key, none, chain.toArray(new Certificate[0]));
      KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(ks, none);
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(kmf.getKeyManagers(), null, null);
      return ctx;
    } catch (GeneralSecurityException | IOException e) {
      throw new GpuDirectException("Cannot use " + privateKey + " with " + certificateChain
          + " for TLS: " + e.getMessage() + " (is the key the certificate's?)", e);
    }
  }

  /**
   * The client's context. {@code trusted}: a PEM file of the certificates to trust (a CA, or
   * the server's own); null trusts the JDK's default CAs.
   */
  public static SSLContext client(Path trusted) {
    try {
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(
          TrustManagerFactory.getDefaultAlgorithm());
      if (trusted == null) {
        tmf.init((KeyStore) null);
      } else {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        int i = 0;
        for (X509Certificate c : certificates(trusted, "tls.trustStore")) {
          ks.setCertificateEntry("trusted-" + i++, c);
        }
        tmf.init(ks);
      }
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, tmf.getTrustManagers(), null);
      return ctx;
    } catch (GeneralSecurityException | IOException e) {
      throw new GpuDirectException("Cannot set up TLS trust from " + trusted + ": " + e.getMessage(), e);
    }
  }

  /** A mismatched pair would only fail at each client's handshake; say so at startup instead. */
  private static void checkKeyMatches(PrivateKey key, X509Certificate cert, Path keyFile,
      Path certFile) {
    String algorithm = key.getAlgorithm().equals("EC") ? "SHA256withECDSA"
        : key.getAlgorithm().equals("RSA") ? "SHA256withRSA" : null;
    if (algorithm == null) {
      return;
    }
    try {
      byte[] probe = "gpudirect key check".getBytes(StandardCharsets.US_ASCII);
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(probe);
      byte[] signature = signer.sign();
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(cert.getPublicKey());
      verifier.update(probe);
      if (!verifier.verify(signature)) {
        throw new GpuDirectException("--tls-key " + keyFile + " does not belong to the"
            + " certificate in --tls-cert " + certFile + " (" + cert.getSubjectX500Principal() + ")");
      }
    } catch (GeneralSecurityException e) {
      throw new GpuDirectException("--tls-key " + keyFile + " does not belong to the"
          + " certificate in --tls-cert " + certFile + ": " + e.getMessage(), e);
    }
  }

  static List<X509Certificate> certificates(Path pem, String what) {
    byte[] bytes = read(pem, what);
    String text = new String(bytes, StandardCharsets.US_ASCII);
    if (!text.contains("-----BEGIN CERTIFICATE-----")) {
      throw new GpuDirectException(what + " " + pem + " holds no PEM certificate (-----BEGIN"
          + " CERTIFICATE-----); from a Java keystore: keytool -exportcert -rfc -alias NAME"
          + " -keystore STORE -file " + pem.getFileName());
    }
    try {
      List<X509Certificate> out = new ArrayList<>();
      for (Certificate c : CertificateFactory.getInstance("X.509")
          .generateCertificates(new ByteArrayInputStream(bytes))) {
        out.add((X509Certificate) c);
      }
      return out;
    } catch (GeneralSecurityException e) {
      throw new GpuDirectException(what + " " + pem + " is not a valid PEM certificate file: "
          + e.getMessage(), e);
    }
  }

  /** {@code pem}'s key, which must be of the certificate's {@code algorithm} (in {@code certFile}). */
  static PrivateKey privateKey(Path pem, Path certFile, String algorithm) {
    String text = new String(read(pem, "--tls-key"), StandardCharsets.US_ASCII);
    Matcher m = KEY.matcher(text);
    if (!m.find()) {
      throw new GpuDirectException("--tls-key " + pem + " holds no PEM private key");
    }
    if (!m.group(1).isEmpty()) {
      throw new GpuDirectException("--tls-key " + pem + " is a '" + m.group(1).trim()
          + " PRIVATE KEY'; gpudirect reads unencrypted PKCS#8 keys (BEGIN PRIVATE KEY)."
          + " Convert it: openssl pkcs8 -topk8 -nocrypt -in " + pem.getFileName()
          + " -out server-key.pk8.pem");
    }
    PKCS8EncodedKeySpec der;
    try {
      der = new PKCS8EncodedKeySpec(Base64.getMimeDecoder().decode(m.group(2)));
    } catch (IllegalArgumentException e) {
      throw new GpuDirectException("--tls-key " + pem + " is not valid PEM: its body is not base64", e);
    }
    try {
      return KeyFactory.getInstance(algorithm).generatePrivate(der);
    } catch (GeneralSecurityException e) {
      String actual = algorithmOf(der);
      if (actual != null) {
        throw new GpuDirectException("--tls-key " + pem + " does not belong to the certificate in --tls-cert "
            + certFile + ": it is " + withArticle(actual) + " key, and the certificate holds " + withArticle(algorithm)
            + " key. Give the key the certificate was made for", e);
      }
      throw new GpuDirectException("--tls-key " + pem + " is not a PKCS#8 private key that Java reads (RSA, EC,"
          + " Ed25519): " + e.getMessage(), e);
    }
  }

  /** The algorithm of a PKCS#8 key that the certificate's algorithm did not read, or null. */
  private static String algorithmOf(PKCS8EncodedKeySpec der) {
    for (String algorithm : new String[] {"RSA", "EC", "Ed25519", "Ed448", "DSA", "RSASSA-PSS"}) {
      try {
        KeyFactory.getInstance(algorithm).generatePrivate(der);
        return algorithm;
      } catch (GeneralSecurityException e) {
        // not this one
      }
    }
    return null;
  }

  private static String withArticle(String algorithm) {
    return (algorithm.startsWith("D") ? "a " : "an ") + algorithm;
  }

  private static byte[] read(Path file, String what) {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      throw new GpuDirectException("Cannot read " + what + " " + file + ": " + e, e);
    }
  }
}
