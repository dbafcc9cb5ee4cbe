package io.gpudirect.cli;

import io.gpudirect.GpuDirectException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The shared secret is read from a file, never from the command line, where other users of
 * the host could see it in the process list.
 */
final class SecretFile {
  static final String ENV = "GPUDIRECT_SECRET_FILE";
  /** Where a command-line user sets the secret, as authentication errors name it. */
  static final String SETTING = "--secret-file FILE (or $" + ENV + ")";

  private SecretFile() {}

  /**
   * Refuses a secret given as an argument ({@code --secret}, a hidden option that exists only
   * to say this): by then it is already in the process list, so the message says to change it.
   */
  static void refuseOnCommandLine(String given) {
    if (given != null) {
      throw new GpuDirectException("--secret is not accepted: a secret on the command line can be"
          + " read by every user of this host (ps, /proc/PID/cmdline). Put it in a file only you"
          + " can read and pass --secret-file FILE (or set $" + ENV + "); and choose a new"
          + " secret, since this one has been exposed");
    }
  }

  /** {@code file}, or the file named by $GPUDIRECT_SECRET_FILE, or null. */
  static Path resolve(Path file) {
    if (file == null && System.getenv(ENV) != null) {
      return Path.of(System.getenv(ENV));
    }
    return file;
  }

  /** The secret in {@link #resolve}'s file, leading and trailing whitespace stripped, or null. */
  static String read(Path file) {
    Path f = resolve(file);
    if (f == null) {
      return null;
    }
    try {
      String secret = Files.readString(f, StandardCharsets.UTF_8).strip();
      if (secret.isEmpty()) {
        throw new GpuDirectException("Secret file " + f + " is empty");
      }
      return secret;
    } catch (IOException e) {
      throw new GpuDirectException("Cannot read secret file " + f + ": " + e, e);
    }
  }
}
