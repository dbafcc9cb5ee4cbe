package io.gpudirect.cli;

import io.gpudirect.GpuDirectException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * The shared secret is read from a file, never from the command line, where other users of
 * the host could see it in the process list.
 */
final class SecretFile {
  static final String ENV = "GPUDIRECT_SECRET_FILE";
  /** Where a command-line user sets the secret, as authentication errors name it. */
  static final String SETTING = "--secret-file FILE (or $" + ENV + ")";

  /** What a missing or empty secret file needs. */
  private static final String FIX = "A client's secret file holds the secret the server was started with"
      + " (its --secret-file), readable by its user only (chmod 600); a new server's is made with"
      + " head -c 32 /dev/urandom | base64 > FILE";

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
    String secret;
    try {
      secret = Files.readString(f, StandardCharsets.UTF_8).strip();
    } catch (NoSuchFileException e) {
      throw new GpuDirectException("Secret file " + f + " does not exist" + from(file) + ". " + FIX, e);
    } catch (AccessDeniedException e) {
      throw new GpuDirectException("Secret file " + f + " cannot be read by this user" + from(file)
          + ": run as its owner, or give this user read access (and no one else)", e);
    } catch (IOException e) {
      throw new GpuDirectException("Cannot read secret file " + f + from(file) + ": " + e.getMessage(), e);
    }
    if (secret.isEmpty()) {
      throw new GpuDirectException("Secret file " + f + " is empty" + from(file) + ". " + FIX);
    }
    return secret;
  }

  /** Where the file's name came from, when not from --secret-file. */
  private static String from(Path given) {
    return given == null ? " (named by $" + ENV + ")" : "";
  }
}
