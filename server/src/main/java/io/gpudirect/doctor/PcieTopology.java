package io.gpudirect.doctor;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The GPU-to-NIC part of {@code nvidia-smi topo -m}: a tab-separated matrix whose header names
 * GPUs and NICs ({@code NIC0} with a legend naming {@code mlx5_0}, or the device name itself in
 * older drivers), and whose cells say how a pair is connected (PIX, PXB, PHB, NODE, SYS).
 */
record PcieTopology(List<String> gpus, List<String> nics, Map<String, Map<String, String>> cells,
    Map<String, String> nicNames) {
  /** A GPU's link to one NIC. */
  record Link(String nic, String kind) {}

  /** Closer is smaller. Unknown kinds sort last. */
  static int rank(String kind) {
    return switch (kind) {
      case "PIX" -> 1;
      case "PXB" -> 2;
      case "PHB" -> 3;
      case "NODE" -> 4;
      case "SYS" -> 5;
      default -> 6;
    };
  }

  static String describe(String kind) {
    return switch (kind) {
      case "PIX" -> "one PCIe bridge apart";
      case "PXB" -> "under one PCIe switch";
      case "PHB" -> "through the CPU's host bridge";
      case "NODE" -> "across host bridges of one NUMA node";
      case "SYS" -> "across NUMA nodes";
      default -> "unknown link";
    };
  }

  static PcieTopology parse(String output) {
    String text = output.replaceAll("\u001B\\[[0-9;]*m", "");
    List<String> header = null;
    List<String> gpus = new ArrayList<>();
    Map<String, Map<String, String>> cells = new LinkedHashMap<>();
    Map<String, String> nicNames = new LinkedHashMap<>();
    for (String line : text.split("\n")) {
      String trimmed = line.strip();
      if (header == null && trimmed.startsWith("GPU0")) {
        header = new ArrayList<>();
        for (String h : line.split("\t")) {
          header.add(h.strip());
        }
        continue;
      }
      if (header != null && trimmed.matches("GPU\\d+\\s.*")) {
        String[] f = line.split("\t");
        String gpu = f[0].strip();
        Map<String, String> row = new LinkedHashMap<>();
        for (int i = 1; i < f.length && i < header.size(); i++) {
          row.put(header.get(i), f[i].strip());
        }
        gpus.add(gpu);
        cells.put(gpu, row);
      }
      if (trimmed.matches("NIC\\d+:\\s*\\S+")) {
        String[] kv = trimmed.split(":\\s*", 2);
        nicNames.put(kv[0], kv[1]);
      }
    }
    List<String> nics = new ArrayList<>();
    if (header != null) {
      for (String h : header) {
        if (h.matches("NIC\\d+") || h.matches("(mlx|bnxt_re|irdma|rxe|efa|hfi|qedr|ib)\\S*")) {
          nics.add(h);
        }
      }
    }
    return new PcieTopology(gpus, nics, cells, nicNames);
  }

  /** The NIC closest to {@code gpu}, named by the legend when it has one. */
  Link nearestNic(String gpu) {
    Link best = null;
    for (String nic : nics) {
      String kind = cells.getOrDefault(gpu, Map.of()).getOrDefault(nic, "?");
      if (best == null || rank(kind) < rank(best.kind())) {
        best = new Link(nicNames.containsKey(nic) ? nic + " = " + nicNames.get(nic) : nic, kind);
      }
    }
    return best;
  }
}
