package io.gpudirect.doctor;

import io.gpudirect.gpu.GpuEnvironment;
import io.gpudirect.verbs.provider.ProviderReport;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The checks of {@code gpudirect doctor}, each one finding with the command that fixes it.
 * What is FAIL depends on what the host is meant to do ({@link Requirement}): TCP into host
 * memory needs nothing beyond Java, so on a host with no GPU and no RDMA nothing fails unless
 * a GPU or RDMA is required; what is absent and not required is SKIP, what would make a
 * fallback or slow things down is WARN.
 */
public final class HostChecks {
  /** What the host must be able to do; {@code --require}. */
  public enum Requirement {
    /** A GPU that CUDA sees (the GPU path). */
    GPU,
    /** cuDF's Java API and native library (batches into cuDF). */
    CUDF,
    /** An active RDMA port, libdisni and enough locked memory (the RDMA transport). */
    RDMA,
    /** RDMA straight into GPU memory: all of the above plus nvidia-peermem. */
    GPUDIRECT;

    public static Requirement parse(String s) {
      try {
        return valueOf(s.trim().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("Unknown requirement '" + s + "': expected gpu, cudf, rdma or gpudirect");
      }
    }
  }

  /** Socket buffer limits below this cap a single TCP stream well below 100 Gb/s. */
  static final long SOCKET_BUFFER_BYTES = 64L << 20;
  /** Locked memory RDMA needs for its registered chunks; unlimited is the usual setting. */
  static final long MEMLOCK_BYTES = 1L << 30;

  private final Host host;
  private final boolean gpuRequired;
  private final boolean cudfRequired;
  private final boolean rdmaRequired;
  private final boolean peermemRequired;

  public HostChecks(Host host, Set<Requirement> required) {
    this.host = host;
    Set<Requirement> r = required.isEmpty() ? EnumSet.noneOf(Requirement.class) : EnumSet.copyOf(required);
    boolean gpudirect = r.contains(Requirement.GPUDIRECT);
    this.gpuRequired = gpudirect || r.contains(Requirement.GPU);
    this.cudfRequired = r.contains(Requirement.CUDF);
    this.rdmaRequired = gpudirect || r.contains(Requirement.RDMA);
    this.peermemRequired = gpudirect;
  }

  /** Every check, in the order a person fixing the host would go. */
  public List<Finding> run() {
    List<Finding> out = new ArrayList<>();
    GpuEnvironment gpu = host.gpu().get();
    List<String> rdma = host.list("/sys/class/infiniband");
    out.add(gpu(gpu));
    out.add(cudf());
    out.add(rdmaDevices(rdma));
    ProviderReport ucx = host.ucx().get();
    out.add(ucx(ucx, rdma));
    out.add(ucxCuda(ucx, gpu));
    out.add(disni(rdma, ucx.rdma() == null));
    out.add(peermem(gpu, rdma));
    out.add(gpudirectRdma(gpu, rdma, ucx));
    out.add(memlock(rdma));
    out.addAll(socketBuffers());
    out.addAll(tcpSettings());
    out.addAll(irqAffinity());
    out.add(pcieDistance(gpu, rdma));
    return out;
  }

  Finding gpu(GpuEnvironment gpu) {
    if (gpu.gpu()) {
      return Finding.ok("gpu", gpu.reason());
    }
    return Finding.missing(gpuRequired, Finding.Status.SKIP, "gpu",
        "no GPU: " + gpu.reason() + "; reads go to host memory",
        "nvidia-smi   # must list the GPU; if not, install the NVIDIA driver and CUDA 12 runtime"
            + " (https://docs.nvidia.com/cuda/cuda-installation-guide-linux/)");
  }

  Finding cudf() {
    String why = host.cudf().get();
    if (why == null) {
      return Finding.ok("cudf", "cuDF loads: batches are built in GPU memory");
    }
    return Finding.missing(cudfRequired, Finding.Status.SKIP, "cudf", why,
        "add ai.rapids:cudf:24.12.0:cuda12 to the classpath (on a RAPIDS cluster it is provided;"
            + " spark-submit --jars cudf-24.12.0-cuda12.jar) on a host with a GPU and CUDA 12");
  }

  Finding rdmaDevices(List<String> devices) {
    if (devices.isEmpty()) {
      return Finding.missing(rdmaRequired, Finding.Status.SKIP, "rdma-devices",
          "no RDMA device in /sys/class/infiniband; reads use TCP",
          "sudo apt-get install rdma-core ibverbs-utils && ibv_devices   # then load the NIC's"
              + " driver, e.g. sudo modprobe mlx5_ib");
    }
    List<String> active = new ArrayList<>();
    List<String> seen = new ArrayList<>();
    for (String d : devices) {
      for (String port : host.list("/sys/class/infiniband/" + d + "/ports")) {
        String base = "/sys/class/infiniband/" + d + "/ports/" + port + "/";
        String state = host.read(base + "state").orElse("?");
        String layer = host.read(base + "link_layer").orElse("?");
        seen.add(d + " port " + port + " " + state + " (" + layer + ")");
        if (state.contains("ACTIVE")) {
          active.add(d + ":" + port);
        }
      }
    }
    if (active.isEmpty()) {
      return Finding.missing(rdmaRequired, Finding.Status.WARN, "rdma-devices",
          "RDMA devices but no active port: " + String.join(", ", seen),
          "ibv_devinfo   # check the cable and the switch port; for RoCE the Ethernet link must be up:"
              + " sudo ip link set <netdev> up");
    }
    return Finding.ok("rdma-devices", "active: " + String.join(", ", active) + " (" + String.join(", ", seen) + ")");
  }

  /**
   * UCX, the first RDMA provider: its version and transports, and whether it has an RDMA one
   * here. Over TCP it runs only when forced (transport=rdma), never under transport=auto.
   */
  Finding ucx(ProviderReport ucx, List<String> rdma) {
    String install = "sudo apt-get install libucx0   # or dnf install ucx ucx-ib; with CUDA see docs/deployment.md";
    if (ucx.missing() != null) {
      return Finding.missing(false, rdma.isEmpty() ? Finding.Status.SKIP : Finding.Status.WARN, "ucx",
          "UCX is not usable: " + ucx.missing(), install);
    }
    String what = "UCX " + ucx.version() + " loads; transports: " + String.join(", ", ucx.transports());
    if (ucx.rdma() == null) {
      return Finding.ok("ucx", what + "; RDMA over verbs: yes (transport=auto takes it)");
    }
    return Finding.missing(false, rdma.isEmpty() ? Finding.Status.SKIP : Finding.Status.WARN, "ucx",
        what + "; no RDMA transport: " + ucx.rdma() + ". transport=auto reads over gpudirect's TCP;"
            + " transport=rdma runs UCX over TCP (named ucx:tcp, not RDMA)",
        rdma.isEmpty() ? "" : "sudo apt-get install libucx0 rdma-core ibverbs-providers   # UCX's ib transports");
  }

  /** Whether UCX maps GPU memory: it must be built with CUDA for RDMA straight into the GPU. */
  Finding ucxCuda(ProviderReport ucx, GpuEnvironment gpu) {
    if (ucx.missing() != null) {
      return Finding.skip("ucx-cuda", "no UCX");
    }
    if (ucx.cudaMemory()) {
      return Finding.ok("ucx-cuda", "this UCX maps CUDA memory");
    }
    return Finding.missing(false, gpu.gpu() ? Finding.Status.WARN : Finding.Status.SKIP, "ucx-cuda",
        "this UCX has no CUDA memory support (built without CUDA)" + (gpu.gpu()
            ? ": device reads over UCX land in pinned host chunks and are copied to the GPU" : ""),
        "install a UCX built with CUDA (NVIDIA's ucx + ucx-cuda, or ./contrib/configure-release"
            + " --with-cuda=/usr/local/cuda --with-verbs --with-rdmacm); see docs/deployment.md");
  }

  /** What RDMA straight into GPU memory (GPUDirect RDMA) still needs on this host, all in one line. */
  Finding gpudirectRdma(GpuEnvironment gpu, List<String> rdma, ProviderReport ucx) {
    List<String> needs = new ArrayList<>();
    if (!gpu.gpu()) {
      needs.add("a GPU");
    }
    if (rdma.isEmpty()) {
      needs.add("an RDMA NIC (none in /sys/class/infiniband)");
    } else if (ucx.missing() == null && ucx.rdma() != null) {
      needs.add("UCX with its verbs transports (" + ucx.rdma() + ")");
    }
    if (ucx.missing() != null) {
      needs.add("UCX (libucp)");
    } else if (!ucx.cudaMemory()) {
      needs.add("UCX built with CUDA");
    }
    boolean peermem = host.exists("/sys/module/nvidia_peermem")
        || host.read("/proc/modules").map(m -> m.contains("nvidia_peermem ") || m.contains("nv_peer_mem ")).orElse(false);
    if (!peermem) {
      needs.add("the nvidia-peermem module");
    }
    if (needs.isEmpty()) {
      return Finding.ok("gpudirect-rdma", "GPU, RDMA NIC, UCX with verbs and CUDA, nvidia-peermem: all there");
    }
    return Finding.missing(peermemRequired, gpu.gpu() && !rdma.isEmpty() ? Finding.Status.WARN : Finding.Status.SKIP,
        "gpudirect-rdma", "GPUDirect RDMA would still need: " + String.join("; ", needs),
        "see docs/deployment.md (UCX on a real cluster, with CUDA; nvidia-peermem)");
  }

  Finding disni(List<String> rdma, boolean ucxRdma) {
    String path = System.getProperty("java.library.path", "");
    String why = host.loadLibrary().apply("disni");
    if (why == null) {
      return Finding.ok("libdisni", "libdisni loads (java.library.path=" + path + ")");
    }
    // UCX with verbs serves RDMA without DiSNI: then DiSNI's absence fails nothing.
    return Finding.missing(rdmaRequired && !ucxRdma, rdma.isEmpty() ? Finding.Status.SKIP : Finding.Status.WARN, "libdisni",
        "libdisni does not load (" + why + ")" + (why.contains(path) ? "" : "; java.library.path=" + path)
            + (rdma.isEmpty() ? "" : "; transport=auto will use TCP"),
        "git clone -b v2.1 https://github.com/zrlio/disni && cd disni/libdisni && ./autoprepare.sh"
            + " && ./configure --with-jdk=$JAVA_HOME && make && sudo make install   # then add"
            + " -Djava.library.path=/usr/local/lib to spark.executor.extraJavaOptions");
  }

  Finding peermem(GpuEnvironment gpu, List<String> rdma) {
    boolean loaded = host.exists("/sys/module/nvidia_peermem")
        || host.read("/proc/modules").map(m -> m.contains("nvidia_peermem ") || m.contains("nv_peer_mem ")).orElse(false);
    if (loaded) {
      return Finding.ok("nvidia-peermem", "loaded: the NIC can write into GPU memory");
    }
    boolean relevant = gpu.gpu() && !rdma.isEmpty();
    return Finding.missing(peermemRequired, relevant ? Finding.Status.WARN : Finding.Status.SKIP, "nvidia-peermem",
        "nvidia-peermem is not loaded" + (relevant
            ? ": RDMA will land in pinned host memory and be copied to the GPU"
            : " (only GPUDirect RDMA needs it: a GPU and an RDMA NIC on one host)"),
        "sudo modprobe nvidia-peermem && echo nvidia-peermem | sudo tee /etc/modules-load.d/nvidia-peermem.conf");
  }

  Finding memlock(List<String> rdma) {
    Optional<String> limits = host.read("/proc/self/limits");
    if (limits.isEmpty()) {
      return Finding.skip("memlock", "cannot read /proc/self/limits");
    }
    String line = limits.get().lines().filter(l -> l.startsWith("Max locked memory")).findFirst().orElse("");
    String[] f = line.substring(Math.min(line.length(), "Max locked memory".length())).trim().split("\\s+");
    if (f.length < 2) {
      return Finding.skip("memlock", "no 'Max locked memory' in /proc/self/limits");
    }
    String soft = f[0];
    if (soft.equals("unlimited")) {
      return Finding.ok("memlock", "unlimited (ulimit -l)");
    }
    long bytes = parseLong(soft);
    String fix = "ulimit -l unlimited   # persistent: '* - memlock unlimited' in /etc/security/limits.d/90-gpudirect.conf;"
        + " systemd: LimitMEMLOCK=infinity; Docker: --ulimit memlock=-1; Kubernetes: raise the container runtime's"
        + " default (e.g. LimitMEMLOCK=infinity for containerd)";
    String summary = "locked memory is limited to " + human(bytes) + " for this process (ulimit -l); RDMA registers"
        + " its buffers and needs at least " + human(MEMLOCK_BYTES) + ", better unlimited. Executors inherit the"
        + " limit of whatever starts them";
    if (bytes >= MEMLOCK_BYTES) {
      return Finding.ok("memlock", human(bytes) + " (ulimit -l)");
    }
    if (rdmaRequired) {
      return Finding.fail("memlock", summary, fix);
    }
    return rdma.isEmpty()
        ? Finding.ok("memlock", human(bytes) + " (ulimit -l); only RDMA needs more, and there is no RDMA device")
        : Finding.warn("memlock", summary, fix);
  }

  List<Finding> socketBuffers() {
    List<Finding> out = new ArrayList<>();
    for (String key : List.of("rmem_max", "wmem_max")) {
      String name = "net.core." + key;
      Optional<String> v = host.read("/proc/sys/net/core/" + key);
      if (v.isEmpty()) {
        out.add(Finding.skip(name, "cannot read /proc/sys/net/core/" + key));
        continue;
      }
      long bytes = parseLong(v.get());
      out.add(bytes >= SOCKET_BUFFER_BYTES
          ? Finding.ok(name, human(bytes))
          : Finding.warn(name, human(bytes) + ", below " + human(SOCKET_BUFFER_BYTES)
                  + ": caps what one TCP stream can keep in flight on a fast link",
              "sudo sysctl -w " + name + "=" + SOCKET_BUFFER_BYTES + " && echo '" + name + "=" + SOCKET_BUFFER_BYTES
                  + "' | sudo tee -a /etc/sysctl.d/90-gpudirect.conf"));
    }
    return out;
  }

  List<Finding> tcpSettings() {
    List<Finding> out = new ArrayList<>();
    for (String key : List.of("tcp_rmem", "tcp_wmem")) {
      String name = "net.ipv4." + key;
      Optional<String> v = host.read("/proc/sys/net/ipv4/" + key);
      if (v.isEmpty()) {
        out.add(Finding.skip(name, "cannot read /proc/sys/net/ipv4/" + key));
        continue;
      }
      String[] f = v.get().split("\\s+");
      long max = f.length == 3 ? parseLong(f[2]) : -1;
      out.add(max >= SOCKET_BUFFER_BYTES
          ? Finding.ok(name, v.get().replaceAll("\\s+", " "))
          : Finding.warn(name, "'" + v.get().replaceAll("\\s+", " ") + "': autotuning stops at " + human(max)
                  + ", below " + human(SOCKET_BUFFER_BYTES),
              "sudo sysctl -w " + name + "='4096 131072 " + SOCKET_BUFFER_BYTES + "' && echo '" + name
                  + "=4096 131072 " + SOCKET_BUFFER_BYTES + "' | sudo tee -a /etc/sysctl.d/90-gpudirect.conf"));
    }
    host.read("/proc/sys/net/ipv4/tcp_window_scaling").ifPresent(v -> out.add(v.equals("1")
        ? Finding.ok("net.ipv4.tcp_window_scaling", "on")
        : Finding.warn("net.ipv4.tcp_window_scaling", "off: TCP windows cannot exceed 64 KiB",
            "sudo sysctl -w net.ipv4.tcp_window_scaling=1")));
    host.read("/proc/sys/net/ipv4/tcp_congestion_control").ifPresent(v ->
        out.add(Finding.ok("net.ipv4.tcp_congestion_control", v)));
    return out;
  }

  /** NICs with MSI interrupts: are their IRQs on the CPUs of the NIC's own NUMA node, and spread? */
  List<Finding> irqAffinity() {
    List<Finding> out = new ArrayList<>();
    for (String nic : host.list("/sys/class/net")) {
      String dev = "/sys/class/net/" + nic + "/device";
      if (nic.equals("lo") || !host.exists(dev)) {
        continue;
      }
      List<String> irqs = host.list(dev + "/msi_irqs");
      String check = "irq-affinity " + nic;
      if (irqs.isEmpty()) {
        out.add(Finding.skip(check, "no MSI interrupts listed in " + dev + "/msi_irqs (a virtual NIC?)"));
        continue;
      }
      int node = (int) parseLong(host.read(dev + "/numa_node").orElse("-1"));
      Set<Integer> nodeCpus = node < 0 ? Set.of()
          : cpus(host.read("/sys/devices/system/node/node" + node + "/cpulist").orElse(""));
      Set<Integer> used = new TreeSet<>();
      List<String> remote = new ArrayList<>();
      for (String irq : irqs) {
        Set<Integer> c = cpus(host.read("/proc/irq/" + irq + "/smp_affinity_list").orElse(""));
        used.addAll(c);
        if (!nodeCpus.isEmpty() && !c.isEmpty() && !nodeCpus.containsAll(c)) {
          remote.add(irq);
        }
      }
      String nodeList = host.read("/sys/devices/system/node/node" + node + "/cpulist").orElse("");
      String fix = "sudo systemctl stop irqbalance; for i in $(ls " + dev + "/msi_irqs); do echo "
          + (nodeList.isEmpty() ? "<cpus of the NIC's node>" : nodeList)
          + " | sudo tee /proc/irq/$i/smp_affinity_list; done   # Mellanox: sudo set_irq_affinity_cpulist.sh "
          + (nodeList.isEmpty() ? "<cpus>" : nodeList) + " " + nic;
      if (!remote.isEmpty()) {
        out.add(Finding.warn(check, remote.size() + " of " + irqs.size() + " IRQs of " + nic
            + " run on CPUs outside its NUMA node " + node + " (CPUs " + nodeList + "): every packet crosses sockets", fix));
      } else if (irqs.size() > 1 && used.size() == 1) {
        out.add(Finding.warn(check, "all " + irqs.size() + " IRQs of " + nic + " run on CPU " + used.iterator().next()
            + ": one core handles every packet", fix));
      } else {
        out.add(Finding.ok(check, irqs.size() + " IRQs on CPUs " + compact(used)
            + (node < 0 ? "" : ", NUMA node " + node + " (CPUs " + nodeList + ")")));
      }
    }
    if (out.isEmpty()) {
      out.add(Finding.skip("irq-affinity", "no physical NIC in /sys/class/net"));
    }
    return out;
  }

  Finding pcieDistance(GpuEnvironment gpu, List<String> rdma) {
    Optional<String> topo = host.commands().apply(List.of("nvidia-smi", "topo", "-m"));
    if (topo.isEmpty()) {
      return Finding.skip("pcie-distance", "nvidia-smi is not installed here (no NVIDIA driver)");
    }
    PcieTopology t = PcieTopology.parse(topo.get());
    if (t.gpus().isEmpty()) {
      return Finding.skip("pcie-distance", "nvidia-smi topo -m lists no GPU");
    }
    if (t.nics().isEmpty()) {
      return Finding.skip("pcie-distance", "nvidia-smi topo -m lists no NIC" + (rdma.isEmpty() ? " (no RDMA device)" : ""));
    }
    List<String> far = new ArrayList<>();
    List<String> near = new ArrayList<>();
    for (String g : t.gpus()) {
      PcieTopology.Link best = t.nearestNic(g);
      String s = g + " → " + best.nic() + " " + best.kind() + " (" + PcieTopology.describe(best.kind()) + ")";
      (PcieTopology.rank(best.kind()) <= PcieTopology.rank("PXB") ? near : far).add(s);
    }
    if (far.isEmpty()) {
      return Finding.ok("pcie-distance", String.join("; ", near));
    }
    return Finding.warn("pcie-distance", "GPU and NIC are far apart: " + String.join("; ", far)
            + (near.isEmpty() ? "" : "; near: " + String.join("; ", near)),
        "run executors on the GPUs nearest the NIC (CUDA_VISIBLE_DEVICES=<near GPUs>, or spark.executor.resource.gpu"
            + " discovery limited to them), or move the NIC into a slot under the GPU's PCIe switch");
  }

  static Set<Integer> cpus(String list) {
    Set<Integer> out = new TreeSet<>();
    for (String part : list.trim().split(",")) {
      if (part.isBlank()) {
        continue;
      }
      try {
        String[] r = part.trim().split("-");
        int lo = Integer.parseInt(r[0]);
        int hi = r.length > 1 ? Integer.parseInt(r[1]) : lo;
        for (int c = lo; c <= hi && c - lo < 4096; c++) {
          out.add(c);
        }
      } catch (NumberFormatException e) {
        // a malformed entry says nothing about affinity
      }
    }
    return out;
  }

  private static String compact(Set<Integer> cpus) {
    StringBuilder sb = new StringBuilder();
    Integer start = null;
    Integer prev = null;
    for (int c : cpus) {
      if (prev != null && c == prev + 1) {
        prev = c;
        continue;
      }
      if (start != null) {
        sb.append(sb.length() > 0 ? "," : "").append(start.equals(prev) ? "" + start : start + "-" + prev);
      }
      start = c;
      prev = c;
    }
    if (start != null) {
      sb.append(sb.length() > 0 ? "," : "").append(start.equals(prev) ? "" + start : start + "-" + prev);
    }
    return sb.toString();
  }

  private static long parseLong(String s) {
    try {
      return Long.parseLong(s.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  static String human(long bytes) {
    if (bytes < 0) {
      return "unknown";
    }
    if (bytes >= 1L << 30 && bytes % (1L << 30) == 0) {
      return (bytes >> 30) + " GiB";
    }
    if (bytes >= 1L << 20) {
      return String.format(Locale.ROOT, "%.1f MiB", bytes / (double) (1L << 20)).replace(".0 ", " ");
    }
    if (bytes >= 1L << 10) {
      return String.format(Locale.ROOT, "%.1f KiB", bytes / 1024.0).replace(".0 ", " ");
    }
    return bytes + " bytes";
  }
}
