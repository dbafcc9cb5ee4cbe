package io.gpudirect.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * This host's TCP counters ({@code /proc/net/snmp}, {@code /proc/net/netstat}), whose change over
 * a run says what the link did to it. A sender counts its own retransmits, and in a fetch the
 * sender is the server, so what the client's host sees of a loss is the receiving side: segments
 * that arrived out of order (a gap before them: {@code TCPOFOQueue}) and duplicates it was sent
 * again and answered with a D-SACK ({@code TCPDSACKOldSent}, {@code TCPDSACKOfoSent}). They are
 * host-wide: other TCP traffic of this host during the run counts too. Absent (every count -1)
 * where the files are not there (not Linux).
 */
record TcpCounters(long retransmitted, long outOfOrder, long duplicates) {
  static final TcpCounters NONE = new TcpCounters(-1, -1, -1);

  static TcpCounters now() {
    try {
      Map<String, Long> snmp = read(Path.of("/proc/net/snmp"), "Tcp:");
      Map<String, Long> ext = read(Path.of("/proc/net/netstat"), "TcpExt:");
      return new TcpCounters(snmp.getOrDefault("RetransSegs", -1L),
          ext.getOrDefault("TCPOFOQueue", -1L),
          ext.getOrDefault("TCPDSACKOldSent", 0L) + ext.getOrDefault("TCPDSACKOfoSent", 0L));
    } catch (IOException | RuntimeException e) {
      return NONE;
    }
  }

  boolean known() {
    return retransmitted >= 0 && outOfOrder >= 0;
  }

  /** What changed since {@code before}. */
  TcpCounters since(TcpCounters before) {
    if (!known() || !before.known()) {
      return NONE;
    }
    return new TcpCounters(retransmitted - before.retransmitted, outOfOrder - before.outOfOrder,
        duplicates - before.duplicates);
  }

  TcpCounters plus(TcpCounters o) {
    if (!known() || !o.known()) {
      return NONE;
    }
    return new TcpCounters(retransmitted + o.retransmitted, outOfOrder + o.outOfOrder,
        duplicates + o.duplicates);
  }

  /** For a note: what this host saw, or that it cannot tell. */
  String describe() {
    return known() ? String.format("this host: %d segments retransmitted, %d received out of order,"
        + " %d duplicates received", retransmitted, outOfOrder, duplicates)
        : "no TCP counters on this host (/proc/net/snmp)";
  }

  /** The lines come in pairs, names then values, each starting with {@code prefix}. */
  private static Map<String, Long> read(Path file, String prefix) throws IOException {
    List<String> lines = Files.readAllLines(file).stream().filter(l -> l.startsWith(prefix)).toList();
    Map<String, Long> values = new HashMap<>();
    if (lines.size() < 2) {
      return values;
    }
    String[] names = lines.get(0).trim().split("\\s+");
    String[] numbers = lines.get(1).trim().split("\\s+");
    for (int i = 1; i < Math.min(names.length, numbers.length); i++) {
      values.put(names[i], Long.parseLong(numbers[i]));
    }
    return values;
  }
}
