package io.gpudirect.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The systemd unit the server package ships keeps its confinement: each directive below was
 * chosen for a reason written beside it in the unit, and dropping one must be a decision, not
 * an accident (before: {@code systemd-analyze security} rated it 8.5 EXPOSED, with no memory or
 * task cap, every device, every address family and every system call).
 */
class SystemdUnitTest {
  static final Path UNIT = Path.of("src/main/package/systemd/gpudirect.service");

  /** Directive and the value it must have; several values of one directive are joined by a space. */
  static final Map<String, String> HARDENING = new LinkedHashMap<>();

  static {
    HARDENING.put("NoNewPrivileges", "true");
    HARDENING.put("CapabilityBoundingSet", "");
    HARDENING.put("AmbientCapabilities", "");
    HARDENING.put("ProtectSystem", "strict");
    HARDENING.put("ProtectHome", "true");
    HARDENING.put("PrivateTmp", "true");
    HARDENING.put("PrivateMounts", "true");
    HARDENING.put("PrivateDevices", "true");
    HARDENING.put("DevicePolicy", "closed");
    HARDENING.put("ProtectKernelTunables", "true");
    HARDENING.put("ProtectKernelModules", "true");
    HARDENING.put("ProtectKernelLogs", "true");
    HARDENING.put("ProtectControlGroups", "true");
    HARDENING.put("ProtectClock", "true");
    HARDENING.put("ProtectHostname", "true");
    HARDENING.put("ProtectProc", "invisible");
    HARDENING.put("RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6 AF_NETLINK");
    HARDENING.put("RestrictNamespaces", "true");
    HARDENING.put("RestrictRealtime", "true");
    HARDENING.put("RestrictSUIDSGID", "true");
    HARDENING.put("LockPersonality", "true");
    HARDENING.put("RemoveIPC", "true");
    HARDENING.put("SystemCallArchitectures", "native");
    HARDENING.put("SystemCallFilter", "@system-service ~@privileged");
    HARDENING.put("SystemCallErrorNumber", "EPERM");
    HARDENING.put("UMask", "0077");
  }

  @Test
  void theUnitKeepsItsHardening() throws IOException {
    Map<String, List<String>> service = service();
    List<String> missing = new ArrayList<>();
    HARDENING.forEach((directive, value) -> {
      List<String> values = service.get(directive);
      if (values == null || !String.join(" ", values).equals(value)) {
        missing.add(directive + "=" + value + " (the unit has " + values + ")");
      }
    });
    assertEquals(List.of(), missing, "directives dropped or changed in " + UNIT);
  }

  /** Caps on what a runaway (UCX's native memory, a thread per connection) can take from the host. */
  @Test
  void memoryTasksAndFilesAreCapped() throws IOException {
    Map<String, List<String>> service = service();
    for (String cap : List.of("MemoryMax", "TasksMax", "LimitNOFILE")) {
      assertTrue(service.containsKey(cap) && !service.get(cap).get(0).isEmpty()
          && !service.get(cap).get(0).equals("infinity"), cap + " in " + UNIT + ": " + service.get(cap));
    }
    // RDMA registers its buffers, which counts against the locked-memory limit: without
    // CAP_IPC_LOCK it must be raised here.
    assertEquals(List.of("infinity"), service.get("LimitMEMLOCK"));
  }

  /** RDMA's devices are the only physical devices the service sees (PrivateDevices hides the rest). */
  @Test
  void onlyRdmaDevicesAreLetIn() throws IOException {
    Map<String, List<String>> service = service();
    assertEquals(List.of("-/dev/infiniband"), service.get("BindPaths"));
    assertEquals(List.of("char-infiniband_verbs rw", "/dev/infiniband/rdma_cm rw"), service.get("DeviceAllow"));
  }

  /** The JIT writes the code it runs: a JVM cannot live with MemoryDenyWriteExecute, and the unit says so. */
  @Test
  void writeExecuteMemoryIsLeftAllowedAndWhySaid() throws IOException {
    assertFalse(service().containsKey("MemoryDenyWriteExecute"));
    String text = Files.readString(UNIT, StandardCharsets.UTF_8);
    assertTrue(text.contains("# MemoryDenyWriteExecute") && text.contains("JIT"), text);
  }

  /**
   * Where systemd-analyze is installed: its own rating of the unit, at most 2.0; and, from the
   * systemd release the docs name, the very rating docs/deployment.md and the unit give.
   */
  @Test
  void systemdRatesTheUnitAsDocumented() throws Exception {
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/systemd-analyze")), "systemd-analyze not installed");
    String out = run("/usr/bin/systemd-analyze", "security", "--offline=true", UNIT.toString());
    Matcher m = Pattern.compile("Overall exposure level for gpudirect.service: (\\d+\\.\\d) (\\S+)").matcher(out);
    assumeTrue(m.find(), "this systemd-analyze cannot rate a unit file offline: " + out);
    String rating = m.group(1) + " " + m.group(2);
    assertTrue(Double.parseDouble(m.group(1)) <= 2.0, "rated " + rating + ":\n" + out);
    String release = run("/usr/bin/systemd-analyze", "--version").lines().findFirst().orElse("").split(" ")[1];
    for (Path documented : List.of(Path.of("../docs/deployment.md"), UNIT)) {
      String text = Files.readString(documented, StandardCharsets.UTF_8);
      if (text.contains("(systemd " + release + ")")) {
        assertTrue(text.contains("(systemd " + release + ") rates it " + rating),
            documented + " gives another rating than systemd " + release + " gives now, " + rating);
      }
    }
  }

  private static String run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), out);
    return out;
  }

  /** The [Service] section's directives, each with its values in order; continued lines joined. */
  static Map<String, List<String>> service() throws IOException {
    Map<String, List<String>> directives = new LinkedHashMap<>();
    String section = "";
    StringBuilder line = new StringBuilder();
    for (String raw : Files.readAllLines(UNIT, StandardCharsets.UTF_8)) {
      if (raw.endsWith("\\")) {
        line.append(raw, 0, raw.length() - 1).append(' ');
        continue;
      }
      String l = line.append(raw).toString().trim();
      line.setLength(0);
      if (l.isEmpty() || l.startsWith("#") || l.startsWith(";")) {
        continue;
      }
      if (l.startsWith("[")) {
        section = l;
      } else if (section.equals("[Service]")) {
        int eq = l.indexOf('=');
        directives.computeIfAbsent(l.substring(0, eq).trim(), k -> new ArrayList<>()).add(l.substring(eq + 1).trim());
      }
    }
    return directives;
  }
}
