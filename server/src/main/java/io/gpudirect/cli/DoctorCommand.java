package io.gpudirect.cli;

import io.gpudirect.doctor.DoctorReport;
import io.gpudirect.doctor.Host;
import io.gpudirect.doctor.HostChecks;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "doctor", mixinStandardHelpOptions = true,
    description = {"Check this host for gpudirect: GPU, cuDF, RDMA devices, libdisni, nvidia-peermem, locked memory,"
        + " socket buffers and TCP settings, NIC IRQ affinity, GPU-NIC PCIe distance.",
        "Each finding comes with the command that fixes it. Exit 1 when something required (--require) fails;"
            + " warnings and absent optional hardware never fail: a CPU-only host without RDMA exits 0."})
final class DoctorCommand implements Callable<Integer> {
  @Option(names = "--json", description = "Print the findings as JSON.")
  boolean json;

  @Option(names = "--require", split = ",", paramLabel = "WHAT",
      description = "What this host must do, comma-separated: gpu, cudf, rdma, gpudirect (= gpu + rdma +"
          + " nvidia-peermem). Missing requirements are FAIL; by default nothing is required beyond TCP.")
  List<String> require = List.of();

  @Option(names = "--host-root", hidden = true, description = "Read /proc and /sys below this directory (tests).")
  Path hostRoot;

  @Override
  public Integer call() {
    Set<HostChecks.Requirement> required = EnumSet.noneOf(HostChecks.Requirement.class);
    for (String r : require) {
      required.add(HostChecks.Requirement.parse(r));
    }
    Host real = Host.real();
    Host host = hostRoot == null ? real
        : new Host(hostRoot, real.commands(), real.loadLibrary(), real.gpu(), real.cudf(), real.ucx());
    DoctorReport report = new DoctorReport(hostName(), required, new HostChecks(host, required).run());
    if (json) {
      report.printJson(System.out);
    } else {
      report.printText(System.out);
    }
    System.out.flush();
    return report.exitCode();
  }

  private static String hostName() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (java.io.IOException e) {
      return "this host";
    }
  }
}
