package io.gpudirect.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gpudirect.doctor.Finding.Status;
import io.gpudirect.doctor.HostChecks.Requirement;
import io.gpudirect.gpu.GpuEnvironment;
import io.gpudirect.verbs.provider.ProviderReport;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The doctor's judgement, on host trees built in a temporary directory (files in the layout
 * of /proc and /sys; the GPU, libraries and nvidia-smi answer as given), and once on this
 * machine as it really is.
 */
class HostChecksTest {
  static final GpuEnvironment NO_GPU = new GpuEnvironment(false, 0, "", false, "CUDA driver not found");
  static final GpuEnvironment H200 = new GpuEnvironment(true, 1, "NVIDIA H200", true, "1 device(s), device 0 is NVIDIA H200");
  static final Function<String, String> NO_LIBRARY = name -> "no " + name + " in java.library.path";
  /** Debian's UCX on a host without an RDMA device: TCP only, no CUDA. */
  static final ProviderReport UCX_OVER_TCP = new ProviderReport(null, "1.13.1", List.of("tcp", "ib (verbs: rc, ud, dc)"),
      "UCX has no RDMA transport here: no RDMA device", false);
  static final ProviderReport UCX_WITH_VERBS_AND_CUDA = new ProviderReport(null, "1.16.0",
      List.of("tcp", "ib (verbs: rc, ud, dc)", "cuda (cuda_copy, cuda_ipc)"), null, true);
  /** What the host's UCX probe answers; each test's host sets it. */
  private ProviderReport ucx = ProviderReport.absent("libucp (UCX) could not be loaded");
  static final String TOPO_NEAR = "\t\u001B[4mGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\u001B[0m\n"
      + "GPU0\t X \tNV18\tPXB\tSYS\t0-7\t0\t\tN/A\n"
      + "GPU1\tNV18\t X \tSYS\tPXB\t8-15\t1\t\tN/A\n"
      + "NIC0\tPXB\tSYS\t X \tSYS\t\t\t\t\n"
      + "NIC1\tSYS\tPXB\tSYS\t X \t\t\t\t\n\nLegend:\n\n  X    = Self\n\nNIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n";

  @TempDir
  Path root;

  private void file(String path, String content) throws IOException {
    Path p = root.resolve(path.substring(1));
    Files.createDirectories(p.getParent());
    Files.writeString(p, content);
  }

  private void dir(String path) throws IOException {
    Files.createDirectories(root.resolve(path.substring(1)));
  }

  private static String limits(String memlock) {
    return "Limit                     Soft Limit           Hard Limit           Units     \n"
        + "Max open files            1048576              1048576              files     \n"
        + "Max locked memory         " + memlock + "              " + memlock + "              bytes     \n";
  }

  /** A VM with no GPU and no RDMA: small buffers, a virtual NIC. */
  private void cpuOnlyHost() throws IOException {
    file("/proc/self/limits", limits("8388608"));
    file("/proc/modules", "virtio_net 65536 0 - Live 0x0\n");
    file("/proc/sys/net/core/rmem_max", "212992\n");
    file("/proc/sys/net/core/wmem_max", "212992\n");
    file("/proc/sys/net/ipv4/tcp_rmem", "4096\t131072\t6291456\n");
    file("/proc/sys/net/ipv4/tcp_wmem", "4096\t16384\t4194304\n");
    file("/proc/sys/net/ipv4/tcp_window_scaling", "1\n");
    file("/proc/sys/net/ipv4/tcp_congestion_control", "cubic\n");
    dir("/sys/class/net/lo");
    dir("/sys/class/net/eth0/device");
  }

  /** An H200 host with a ConnectX NIC under the GPU's switch, tuned. */
  private void gpudirectHost() throws IOException {
    ucx = UCX_WITH_VERBS_AND_CUDA;
    file("/proc/self/limits", limits("unlimited"));
    dir("/sys/module/nvidia_peermem");
    file("/proc/sys/net/core/rmem_max", "268435456\n");
    file("/proc/sys/net/core/wmem_max", "268435456\n");
    file("/proc/sys/net/ipv4/tcp_rmem", "4096 131072 268435456\n");
    file("/proc/sys/net/ipv4/tcp_wmem", "4096 131072 268435456\n");
    file("/sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
    file("/sys/class/infiniband/mlx5_0/ports/1/link_layer", "InfiniBand\n");
    file("/sys/class/net/ib0/device/numa_node", "0\n");
    file("/sys/devices/system/node/node0/cpulist", "0-7\n");
    file("/sys/devices/system/node/node1/cpulist", "8-15\n");
    for (int irq = 100; irq < 104; irq++) {
      file("/sys/class/net/ib0/device/msi_irqs/" + irq, "msix\n");
      file("/proc/irq/" + irq + "/smp_affinity_list", String.valueOf(irq - 100) + "\n");
    }
  }

  private Host host(GpuEnvironment gpu, String cudf, Function<String, String> library, String topo) {
    return new Host(root, cmd -> Optional.ofNullable(topo), library, () -> gpu, () -> cudf,
        () -> ucx);
  }

  private static Map<String, Finding> byCheck(List<Finding> findings) {
    return findings.stream().collect(Collectors.toMap(Finding::check, f -> f, (a, b) -> a));
  }

  @Test
  void aCpuOnlyHostWithoutRdmaPassesWhenNothingIsRequired() throws IOException {
    cpuOnlyHost();
    Host host = host(NO_GPU, "cuDF's Java API (ai.rapids.cudf.Cuda) is not on the classpath", NO_LIBRARY, null);
    List<Finding> findings = new HostChecks(host, Set.of()).run();
    Map<String, Finding> f = byCheck(findings);
    assertEquals(Status.SKIP, f.get("gpu").status());
    assertEquals(Status.SKIP, f.get("cudf").status());
    assertEquals(Status.SKIP, f.get("rdma-devices").status());
    assertEquals(Status.SKIP, f.get("libdisni").status());
    assertEquals(Status.SKIP, f.get("nvidia-peermem").status());
    assertEquals(Status.OK, f.get("memlock").status(), f.get("memlock").summary());
    assertEquals(Status.WARN, f.get("net.core.rmem_max").status());
    assertTrue(f.get("net.core.rmem_max").fix().startsWith("sudo sysctl -w net.core.rmem_max=67108864"));
    assertEquals(Status.WARN, f.get("net.ipv4.tcp_rmem").status());
    assertTrue(f.get("net.ipv4.tcp_rmem").summary().contains("6 MiB"), f.get("net.ipv4.tcp_rmem").summary());
    assertEquals(Status.OK, f.get("net.ipv4.tcp_congestion_control").status());
    assertEquals(Status.SKIP, f.get("irq-affinity eth0").status());
    assertEquals(Status.SKIP, f.get("pcie-distance").status());
    assertEquals(0, new DoctorReport("vm", Set.of(), findings).exitCode());
  }

  @Test
  void whatIsRequiredButMissingFailsWithItsFix() throws IOException {
    cpuOnlyHost();
    Host host = host(NO_GPU, "cuDF's Java API (ai.rapids.cudf.Cuda) is not on the classpath", NO_LIBRARY, null);
    Set<Requirement> required = EnumSet.of(Requirement.RDMA, Requirement.GPU);
    List<Finding> findings = new HostChecks(host, required).run();
    Map<String, Finding> f = byCheck(findings);
    for (String check : List.of("gpu", "rdma-devices", "libdisni", "memlock")) {
      assertEquals(Status.FAIL, f.get(check).status(), check);
      assertFalse(f.get(check).fix().isEmpty(), check);
    }
    assertTrue(f.get("libdisni").summary().contains("java.library.path="), f.get("libdisni").summary());
    // The release the client is built against, as every other libdisni message pins it.
    assertTrue(f.get("libdisni").fix().startsWith("git clone -b v2.1 "), f.get("libdisni").fix());
    assertTrue(f.get("memlock").summary().contains("8 MiB"), f.get("memlock").summary());
    assertTrue(f.get("memlock").fix().startsWith("ulimit -l unlimited"));
    // Not required: cuDF and nvidia-peermem stay SKIP.
    assertEquals(Status.SKIP, f.get("cudf").status());
    assertEquals(Status.SKIP, f.get("nvidia-peermem").status());
    DoctorReport report = new DoctorReport("vm", required, findings);
    assertEquals(1, report.exitCode());
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    report.printText(new PrintStream(text, true, StandardCharsets.UTF_8));
    String out = text.toString(StandardCharsets.UTF_8);
    assertTrue(out.contains("FAIL  rdma-devices") && out.contains("fix: sudo apt-get install rdma-core"), out);
    assertTrue(out.contains("failures") && out.endsWith("exit 1\n"), out);
  }

  @Test
  void aTunedGpudirectHostIsAllOk() throws Exception {
    gpudirectHost();
    List<Finding> findings = new HostChecks(host(H200, null, name -> null, TOPO_NEAR), EnumSet.of(Requirement.GPUDIRECT, Requirement.CUDF)).run();
    for (Finding f : findings) {
      assertEquals(Status.OK, f.status(), f.toString());
    }
    Map<String, Finding> f = byCheck(findings);
    assertTrue(f.get("rdma-devices").summary().contains("mlx5_0:1"), f.get("rdma-devices").summary());
    assertTrue(f.get("pcie-distance").summary().contains("GPU0 → NIC0 = mlx5_0 PXB"), f.get("pcie-distance").summary());
    assertTrue(f.get("irq-affinity ib0").summary().contains("4 IRQs on CPUs 0-3, NUMA node 0"), f.get("irq-affinity ib0").summary());
    DoctorReport report = new DoctorReport("h200", EnumSet.of(Requirement.GPUDIRECT), findings);
    assertEquals(0, report.exitCode());
    ByteArrayOutputStream json = new ByteArrayOutputStream();
    report.printJson(new PrintStream(json, true, StandardCharsets.UTF_8));
    JsonNode tree = new ObjectMapper().readTree(json.toString(StandardCharsets.UTF_8));
    assertEquals(0, tree.get("exitCode").asInt());
    assertEquals("gpudirect", tree.get("required").get(0).asText());
    assertEquals(findings.size(), tree.get("findings").size());
    assertEquals("gpu", tree.get("findings").get(0).get("check").asText());
  }

  @Test
  void misplacedIrqsFarNicsAndAMissingPeermemAreWarnings() throws IOException {
    gpudirectHost();
    Files.delete(root.resolve("sys/module/nvidia_peermem"));
    // IRQs on the other socket's CPUs.
    for (int n = 100; n < 104; n++) {
      file("/proc/irq/" + n + "/smp_affinity_list", "8-15\n");
    }
    String far = TOPO_NEAR.replace("GPU0\t X \tNV18\tPXB\tSYS", "GPU0\t X \tNV18\tSYS\tSYS");
    Map<String, Finding> f = byCheck(new HostChecks(host(H200, null, name -> null, far), Set.of()).run());
    Finding irq = f.get("irq-affinity ib0");
    assertEquals(Status.WARN, irq.status());
    assertTrue(irq.summary().contains("4 of 4 IRQs of ib0 run on CPUs outside its NUMA node 0"), irq.summary());
    assertTrue(irq.fix().contains("echo 0-7 | sudo tee /proc/irq/$i/smp_affinity_list"), irq.fix());
    Finding pcie = f.get("pcie-distance");
    assertEquals(Status.WARN, pcie.status());
    assertTrue(pcie.summary().contains("far apart: GPU0 → NIC0 = mlx5_0 SYS (across NUMA nodes)")
        && pcie.summary().contains("near: GPU1 → NIC1 = mlx5_1 PXB"), pcie.summary());
    Finding peermem = f.get("nvidia-peermem");
    assertEquals(Status.WARN, peermem.status());
    assertTrue(peermem.fix().startsWith("sudo modprobe nvidia-peermem"), peermem.fix());
    // Every IRQ on one core.
    for (int n = 100; n < 104; n++) {
      file("/proc/irq/" + n + "/smp_affinity_list", "3\n");
    }
    irq = byCheck(new HostChecks(host(H200, null, name -> null, TOPO_NEAR), Set.of()).run()).get("irq-affinity ib0");
    assertEquals(Status.WARN, irq.status());
    assertTrue(irq.summary().contains("all 4 IRQs of ib0 run on CPU 3"), irq.summary());
  }

  @Test
  void ucxIsReportedWithItsVersionTransportsCudaAndWhatGpudirectRdmaStillNeeds() throws IOException {
    cpuOnlyHost();
    ucx = UCX_OVER_TCP;
    Map<String, Finding> f = byCheck(new HostChecks(host(NO_GPU, "no cuDF", NO_LIBRARY, null), Set.of()).run());
    Finding u = f.get("ucx");
    assertEquals(Status.SKIP, u.status(), u.toString());
    assertTrue(u.summary().startsWith("UCX 1.13.1 loads; transports: tcp, ib (verbs: rc, ud, dc); no RDMA transport"),
        u.summary());
    assertTrue(u.summary().contains("transport=rdma runs UCX over TCP (named ucx:tcp, not RDMA)"), u.summary());
    assertEquals(Status.SKIP, f.get("ucx-cuda").status());
    Finding g = f.get("gpudirect-rdma");
    assertEquals("GPUDirect RDMA would still need: a GPU; an RDMA NIC (none in /sys/class/infiniband);"
        + " UCX built with CUDA; the nvidia-peermem module", g.summary());
    // On the H200: a GPU, UCX 1.16 without CUDA transports: device reads go through pinned memory.
    Map<String, Finding> h200 = byCheck(new HostChecks(host(H200, null, NO_LIBRARY, null), Set.of()).run());
    assertEquals(Status.WARN, h200.get("ucx-cuda").status());
    assertTrue(h200.get("ucx-cuda").summary().contains("pinned host chunks"), h200.get("ucx-cuda").summary());
    assertTrue(h200.get("ucx-cuda").fix().contains("--with-cuda"), h200.get("ucx-cuda").fix());
    // Requiring RDMA: UCX over verbs serves it, so a missing libdisni fails nothing then.
    gpudirectHost();
    Map<String, Finding> withUcx = byCheck(new HostChecks(host(H200, null, NO_LIBRARY, TOPO_NEAR),
        Set.of(Requirement.RDMA)).run());
    assertEquals(Status.OK, withUcx.get("ucx").status(), withUcx.get("ucx").toString());
    assertEquals(Status.WARN, withUcx.get("libdisni").status(), withUcx.get("libdisni").toString());
  }

  @Test
  void olderNvidiaSmiNamesTheNicInItsHeader() {
    PcieTopology t = PcieTopology.parse("\tGPU0\tmlx5_0\tCPU Affinity\nGPU0\t X \tPHB\t0-7\nmlx5_0\tPHB\t X \t\n");
    assertEquals(List.of("GPU0"), t.gpus());
    assertEquals(List.of("mlx5_0"), t.nics());
    assertEquals(new PcieTopology.Link("mlx5_0", "PHB"), t.nearestNic("GPU0"));
  }

  @Test
  void runsOnThisMachineAsItIs() throws IOException {
    Host real = Host.real();
    List<Finding> findings = new HostChecks(real, Set.of()).run();
    Map<String, Finding> f = byCheck(findings);
    for (Finding x : findings) {
      assertFalse(x.summary().isBlank(), x.toString());
      assertTrue(x.status() != Status.FAIL, "nothing required, nothing fails: " + x);
      if (x.status() == Status.WARN) {
        assertFalse(x.fix().isBlank(), "a warning says how to fix it: " + x);
      }
    }
    assertEquals(Files.isDirectory(Path.of("/sys/class/infiniband")) && !real.list("/sys/class/infiniband").isEmpty(),
        f.get("rdma-devices").status() != Status.SKIP);
    assertEquals(0, new DoctorReport("here", Set.of(), findings).exitCode());
    // /proc files report a size of 0: the value must be read whole (as cat reads it).
    Path rmem = Path.of("/proc/sys/net/core/rmem_max");
    if (Files.isReadable(rmem)) {
      Process cat = new ProcessBuilder("cat", rmem.toString()).start();
      long value = Long.parseLong(new String(cat.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip());
      assertTrue(f.get("net.core.rmem_max").summary().startsWith(HostChecks.human(value)),
          value + " vs " + f.get("net.core.rmem_max").summary());
    }
    // Requiring RDMA where there is none fails.
    if (real.list("/sys/class/infiniband").isEmpty()) {
      assertEquals(Status.FAIL, byCheck(new HostChecks(real, Set.of(Requirement.RDMA)).run()).get("rdma-devices").status());
    }
  }
}
