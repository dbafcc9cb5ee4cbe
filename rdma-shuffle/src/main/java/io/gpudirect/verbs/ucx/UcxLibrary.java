package io.gpudirect.verbs.ucx;

import io.gpudirect.verbs.RdmaUnavailableException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Whether UCX can run in this JVM, and what it offers: jucx's classes are on the classpath,
 * its JNI library loads (it links libucp from the OS), and which transports and memory types
 * this UCX has. Checked once, lazily, so that a host without UCX never touches its native code
 * and gets a reason in words.
 */
public final class UcxLibrary {
  static final String INSTALL = "install UCX (apt-get install libucx0, or dnf install ucx); for"
      + " RDMA NICs also rdma-core, and for GPU memory UCX built with CUDA; see docs/deployment.md";
  private static final Path RDMA_DEVICES = Path.of("/sys/class/infiniband");

  private static volatile RdmaUnavailableException missing;
  private static volatile boolean checked;

  private UcxLibrary() {}

  /** Returns when jucx and libucp load; otherwise throws saying what is missing. */
  static synchronized void check() {
    if (!checked) {
      missing = probe();
      checked = true;
    }
    if (missing != null) {
      throw missing;
    }
  }

  /** Why UCX cannot run here, or null when it can. */
  public static String unavailableReason() {
    try {
      check();
      return null;
    } catch (RdmaUnavailableException e) {
      return e.getMessage();
    }
  }

  private static RdmaUnavailableException probe() {
    try {
      Class.forName("org.openucx.jucx.ucp.UcpContext", false, UcxLibrary.class.getClassLoader());
    } catch (ClassNotFoundException | LinkageError e) {
      return new RdmaUnavailableException("jucx (org.openucx:jucx) is not on the classpath",
          "use the connector's shaded jar, which bundles it, or add the jar", e,
          "jucx is not on the classpath");
    }
    try {
      org.openucx.jucx.NativeLibs.load();
      // The JNI library loads lazily in some versions: touching a native constant forces it.
      if (org.openucx.jucx.ucp.UcpConstants.UCP_STREAM_RECV_FLAG_WAITALL == 0) {
        throw new UnsatisfiedLinkError("jucx constants did not load");
      }
    } catch (LinkageError | RuntimeException e) {
      return new RdmaUnavailableException("libucp (UCX) could not be loaded: " + e.getMessage(),
          INSTALL, e, "libucp not found");
    }
    return null;
  }

  /** The RDMA devices the kernel lists, comma-separated; empty when none. */
  static String rdmaDevices() {
    if (!Files.isDirectory(RDMA_DEVICES)) {
      return "";
    }
    try (Stream<Path> s = Files.list(RDMA_DEVICES)) {
      return String.join(",", s.map(p -> p.getFileName().toString()).sorted().toList());
    } catch (IOException e) {
      return "";
    }
  }

  /** libucp's path in this process (after loading), or null. */
  static Path loadedLibucp() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
        int at = line.indexOf('/');
        if (at >= 0 && line.contains("libucp.so")) {
          return Path.of(line.substring(at).trim());
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux, or no access
    }
    return null;
  }

  /**
   * UCX's version, e.g. "1.13.1". jucx has no call for it: libucp keeps it as a string constant,
   * which is read from the loaded library file. "unknown" when not found.
   */
  public static String version() {
    Path lib = loadedLibucp();
    if (lib == null) {
      return "unknown";
    }
    try {
      String text = new String(Files.readAllBytes(lib), StandardCharsets.ISO_8859_1);
      Matcher m = Pattern.compile("[^0-9.](1\\.[0-9]{1,2}\\.[0-9]{1,2})\u0000").matcher(text);
      return m.find() ? m.group(1) : "unknown";
    } catch (IOException | OutOfMemoryError e) {
      return "unknown";
    }
  }

  /**
   * The transports this UCX installation has: those built into libuct (tcp, shared memory,
   * self) and those of the plugin modules beside libucp ({@code ucx/libuct_*.so}: ib gives the
   * verbs transports rc, ud and dc; cuda gives cuda_copy and cuda_ipc; gdrcopy gives gdr_copy).
   */
  public static List<String> transports() {
    TreeSet<String> out = new TreeSet<>(List.of("tcp", "sm (posix, sysv)", "self"));
    Path lib = loadedLibucp();
    Path modules = lib == null ? null : lib.getParent().resolve("ucx");
    if (modules != null && Files.isDirectory(modules)) {
      try (Stream<Path> s = Files.list(modules)) {
        s.map(p -> p.getFileName().toString())
            .filter(n -> n.startsWith("libuct_") && n.contains(".so"))
            .map(n -> n.substring("libuct_".length(), n.indexOf(".so")).toLowerCase(Locale.ROOT))
            .forEach(n -> out.add(switch (n) {
              case "ib" -> "ib (verbs: rc, ud, dc)";
              case "cma" -> "cma (shared memory)";
              case "cuda" -> "cuda (cuda_copy, cuda_ipc)";
              case "cuda_gdrcopy", "gdrcopy" -> "gdr_copy";
              default -> n;
            }));
      } catch (IOException e) {
        // the built-in ones remain
      }
    }
    return new ArrayList<>(out);
  }
}
