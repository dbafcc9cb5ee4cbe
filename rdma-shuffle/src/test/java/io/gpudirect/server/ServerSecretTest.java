package io.gpudirect.server;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.GpuDirectException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServerSecretTest {
  @Test
  void aShortSecretIsRefusedSayingHowToMakeAGoodOne(@TempDir Path root) {
    byte[] fifteen = "fifteen bytes!!".getBytes(StandardCharsets.UTF_8);
    GpuDirectException e = assertThrows(GpuDirectException.class,
        () -> BlockServer.builder().root(root).port(0).secret(fifteen).build());
    assertTrue(e.getMessage().contains("holds 15 bytes") && e.getMessage().contains("at least 16")
        && e.getMessage().contains("head -c 32 /dev/urandom | base64 > /etc/gpudirect/secret"),
        e.getMessage());
    GpuDirectException one = assertThrows(GpuDirectException.class,
        () -> ServerSecret.checkLength(new byte[] {'x'}, "secret file /srv/s", "/srv/s"));
    assertTrue(one.getMessage().startsWith("The secret file /srv/s holds 1 byte ")
        && one.getMessage().contains("head -c 32 /dev/urandom | base64 > /srv/s && chmod 600 /srv/s"),
        one.getMessage());
    BlockServer.builder().root(root).port(0)
        .secret("sixteen bytes!!!".getBytes(StandardCharsets.UTF_8)).build();
  }

  @Test
  void aSecretFileOthersCanReadIsWarnedAbout(@TempDir Path dir) throws IOException {
    Path file = Files.writeString(dir.resolve("secret"), "a-secret-of-more-than-16-bytes\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
    String world = warnings(file);
    assertTrue(world.contains("Secret file " + file + " can be read by every user of this host")
        && world.contains("chmod 600 " + file), world);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r-----"));
    assertTrue(warnings(file).contains("can be read by its group"), warnings(file));
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    assertTrue(!warnings(file).contains("Secret file"), warnings(file));
  }

  /** What the check logs (slf4j-simple writes to System.err). */
  private static String warnings(Path file) {
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    PrintStream stderr = System.err;
    System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
    try {
      ServerSecret.warnIfReadableByOthers(file);
    } finally {
      System.setErr(stderr);
    }
    return log.toString(StandardCharsets.UTF_8);
  }
}
