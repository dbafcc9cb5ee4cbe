package io.gpudirect.server;

import io.gpudirect.GpuDirectException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a server's shared secret must be. Whoever holds it reads every file below the root, and
 * a guess is checked offline against one captured handshake as fast as HMAC-SHA256 runs, so it
 * must be long and random: at least {@link #MIN_BYTES} bytes, as the command below makes.
 */
public final class ServerSecret {
  private static final Logger LOG = LoggerFactory.getLogger(ServerSecret.class);
  public static final int MIN_BYTES = 16;

  private ServerSecret() {}

  /** The command that makes a good secret in {@code file}, as docs/security.md gives it. */
  public static String howToMake(String file) {
    return "head -c 32 /dev/urandom | base64 > " + file + " && chmod 600 " + file;
  }

  /**
   * Refuses a secret shorter than {@link #MIN_BYTES}; {@code source} says where it came from
   * ("secret file /etc/gpudirect/secret"), {@code file} is the file to name in the fix.
   */
  public static void checkLength(byte[] secret, String source, String file) {
    if (secret.length < MIN_BYTES) {
      throw new GpuDirectException("The " + source + " holds " + secret.length
          + (secret.length == 1 ? " byte" : " bytes") + " (leading"
          + " and trailing whitespace not counted); a server secret must have at least "
          + MIN_BYTES + ", from a random source. Make one with: " + howToMake(file)
          + " (and give clients the same secret)");
    }
  }

  /**
   * Warns, once per call (the server calls it at start), when {@code file} can be read by its
   * group or by every user of the host: any of them could read every file the server serves.
   */
  public static void warnIfReadableByOthers(Path file) {
    Set<PosixFilePermission> mode;
    try {
      mode = Files.getPosixFilePermissions(file);
    } catch (UnsupportedOperationException | IOException e) {
      return; // not a POSIX file system, or already reported by the read
    }
    boolean group = mode.contains(PosixFilePermission.GROUP_READ);
    boolean others = mode.contains(PosixFilePermission.OTHERS_READ);
    if (group || others) {
      LOG.warn("Secret file {} can be read by {} ({}): whoever reads it can read every file this"
          + " server serves. Make it readable by the server's user only: chmod 600 {}", file,
          others ? "every user of this host" : "its group", PosixFilePermissions.toString(mode), file);
    }
  }
}
