package io.gpudirect.verbs.disni;

import io.gpudirect.verbs.RdmaUnavailableException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * Whether DiSNI can run on this host: its native half (libdisni, which links rdma-core's
 * libibverbs and librdmacm) loads, and the kernel has an RDMA device. Checked once, lazily,
 * so that a host without them never touches DiSNI's native code and gets a reason in words.
 */
final class DisniLibrary {
  static final String INSTALL = "install rdma-core (apt-get install rdma-core libibverbs1"
      + " librdmacm1 ibverbs-providers, or dnf install rdma-core libibverbs librdmacm), build"
      + " libdisni 2.1 (git clone -b v2.1 https://github.com/zrlio/disni && cd disni/libdisni &&"
      + " ./autoprepare.sh && ./configure --with-jdk=$JAVA_HOME && make install) and put its"
      + " directory on LD_LIBRARY_PATH or -Djava.library.path; see docs/deployment.md";
  static final String DEVICE = "load the NIC's RDMA driver (e.g. modprobe mlx5_ib; RoCE needs"
      + " an RDMA-capable NIC), check with ibv_devices; in a container pass /dev/infiniband"
      + " and IPC_LOCK; see docs/deployment.md";

  private static volatile RdmaUnavailableException missing;
  private static volatile boolean checked;

  private DisniLibrary() {}

  /** Returns when DiSNI can be used; otherwise throws saying what is missing and how to install it. */
  static synchronized void check() {
    if (!checked) {
      missing = probe(Path.of("/sys/class/infiniband"));
      checked = true;
    }
    if (missing != null) {
      throw missing;
    }
  }

  static RdmaUnavailableException probe(Path sysfs) {
    String devices = devices(sysfs);
    try {
      Class.forName("com.ibm.disni.verbs.RdmaEventChannel", false, DisniLibrary.class.getClassLoader());
    } catch (ClassNotFoundException | LinkageError e) {
      return new RdmaUnavailableException("DiSNI's classes (com.ibm.disni:disni:2.1) are not on the"
          + " classpath", "use the connector's shaded jar, which bundles them, or add the jar", e,
          "DiSNI's classes are not on the classpath");
    }
    try {
      System.loadLibrary("disni");
    } catch (UnsatisfiedLinkError | SecurityException e) {
      return new RdmaUnavailableException("libdisni not found (" + e.getMessage() + ")"
          + (devices.isEmpty() ? " and no RDMA device (" + sysfs + " is empty or missing)" : ""),
          INSTALL, e, devices.isEmpty() ? "no RDMA device" : "libdisni not found");
    }
    if (devices.isEmpty()) {
      return new RdmaUnavailableException("no RDMA device (" + sysfs + " is empty or missing)",
          DEVICE, null, "no RDMA device");
    }
    return null;
  }

  /** The RDMA devices the kernel lists, comma-separated; empty when none. */
  static String devices(Path sysfs) {
    if (!Files.isDirectory(sysfs)) {
      return "";
    }
    try (Stream<Path> s = Files.list(sysfs)) {
      return String.join(",", s.map(p -> p.getFileName().toString()).sorted().toList());
    } catch (java.io.IOException e) {
      return "";
    }
  }

  static String describeDevices() {
    String d = devices(Path.of("/sys/class/infiniband"));
    return d.isEmpty() ? "no device" : d;
  }
}
