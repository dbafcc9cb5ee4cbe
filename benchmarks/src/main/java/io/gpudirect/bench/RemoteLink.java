package io.gpudirect.bench;

import io.gpudirect.GpuDirectException;
import io.gpudirect.cli.ClientOptions;
import io.gpudirect.client.BlockClient;
import io.gpudirect.client.ClientConfig;
import io.gpudirect.client.FileEntry;
import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.gpu.GpuEnvironment;
import java.net.InetSocketAddress;
import java.util.Map;

/**
 * {@code gpudirect bench gpudirect://HOST:PORT/PATH}: the user's own link to a running server,
 * measured the way the project measures loopback: one file fetched over and over at 1 and 4
 * streams (or {@code --streams}), each run beside {@code iperf3 -R} to the same host when an
 * iperf3 server answers there, interleaved, with this host's CPU, the server's (from its STATUS
 * counters; the whole server process, so other clients' reads count too) and what this host's
 * TCP counters saw of losses ({@link TcpCounters}).
 */
final class RemoteLink {
  private final GpuDirectUri uri;
  private final ClientOptions options;
  private final double duration;
  private final int rounds;
  private final int iperf3Port;

  RemoteLink(GpuDirectUri uri, ClientOptions options, double duration, int rounds, int iperf3Port) {
    this.uri = uri;
    this.options = options;
    this.duration = duration;
    this.rounds = rounds;
    this.iperf3Port = iperf3Port;
  }

  void run(BenchReport report, Progress progress) throws Exception {
    InetSocketAddress address = new InetSocketAddress(uri.host(), uri.port());
    progress.step("remote: connecting to " + uri.authority());
    FileEntry file;
    String transport;
    try (BlockClient probe = BlockClient.connect(address, options.config().build())) {
      file = probe.stat(uri.path());
      transport = probe.transport() + " (" + probe.transportReason() + ")";
    }
    progress.stepDone();
    if (file.directory() || file.length() == 0) {
      throw new GpuDirectException("Cannot bench " + uri + ": it is " + (file.directory()
          ? "a directory" : "an empty file") + "; name one file of some hundred MB or more"
          + " (gpudirect ls " + uri + " lists them)");
    }
    report.context("file", uri + ", " + Sizes.show(file.length()) + ", read over and over from"
        + " the start; over " + transport);
    String iperfAbsent = Iperf3.available() ? null : "iperf3 is not installed on this host";
    GpuEnvironment gpu = GpuEnvironment.get();
    boolean toDevice = gpu.gpu() && gpu.cudf();
    report.context("gpu", toDevice ? "also into GPU memory (" + gpu.deviceName() + ")"
        : "none used, host memory only: " + gpu.reason());
    int[] counts = options.streams() != null ? new int[] {options.streams()} : new int[] {1, 4};
    boolean iperfPlanned = iperfAbsent == null;
    progress.plan(1 + counts.length * rounds * (1 + (toDevice ? 1 : 0) + (iperfPlanned ? 1 : 0)));
    for (int streams : counts) {
      ClientConfig config = options.config().streams(streams).chunkSize(DeviceFetch.CHUNK)
          .maxBytesInFlight(Math.max(64 << 20, DeviceFetch.CHUNK * streams * 2)).build();
      Measurement ours = Measurement.NONE;
      double serverCpu = 0;
      boolean serverCpuKnown = true;
      TcpCounters seen = new TcpCounters(0, 0, 0);
      Measurement iperf = Measurement.NONE;
      double iperfServerCpu = 0;
      long iperfRetransmits = 0;
      TcpCounters iperfSeen = new TcpCounters(0, 0, 0);
      Measurement device = Measurement.NONE;
      for (int r = 0; r < rounds; r++) {
        progress.step("remote: ours, " + streams + " stream(s)");
        Long cpuBefore = serverCpuMillis();
        TcpCounters before = TcpCounters.now();
        ours = ours.plus(OurFetch.run(address, uri.path(), file.length(), config, duration));
        seen = seen.plus(TcpCounters.now().since(before));
        Long cpuAfter = serverCpuMillis();
        if (cpuBefore == null || cpuAfter == null) {
          serverCpuKnown = false;
        } else {
          serverCpu += (cpuAfter - cpuBefore) / 1e3;
        }
        progress.stepDone();
        if (toDevice) {
          progress.step("remote: ours into GPU memory, " + streams + " stream(s)");
          device = device.plus(DeviceFetch.run(address, uri.path(), file.length(), config, duration));
          progress.stepDone();
        }
        if (iperfAbsent == null) {
          progress.step("remote: iperf3 -R, " + streams + " stream(s)");
          TcpCounters iperfBefore = TcpCounters.now();
          try {
            Iperf3.Remote run = Iperf3.toHost(uri.host(), iperf3Port, streams, duration);
            iperfSeen = iperfSeen.plus(TcpCounters.now().since(iperfBefore));
            iperf = iperf.plus(run.client());
            iperfServerCpu += run.serverCpuSeconds();
            iperfRetransmits = run.retransmits() < 0 || iperfRetransmits < 0 ? -1
                : iperfRetransmits + run.retransmits();
          } catch (Iperf3.NoServer e) {
            iperfAbsent = e.getMessage();
          }
          progress.stepDone();
        } else if (iperfPlanned) {
          progress.skip(); // no iperf3 server answered in an earlier round
        }
      }
      String count = streams + (streams == 1 ? " stream" : " streams");
      String name = "ours, " + count;
      String serverNote = serverCpuKnown
          ? String.format("server CPU %.3f s/GB (its whole process)", serverCpu / (ours.bytes() / 1e9))
          : "server CPU unknown (its STATUS has no processCpuMillis: an older server)";
      Row row = Row.of("remote", name, ours).withNote("CPU s/GB is this host's (the client's); "
          + serverNote + "; " + seen.describe());
      if (iperfAbsent == null && iperf.bytes() > 0) {
        double t = iperf.gbitPerSecond() > 0 ? ours.gbitPerSecond() / iperf.gbitPerSecond() : Double.NaN;
        double c = iperf.cpuSecondsPerGb() > 0 ? ours.cpuSecondsPerGb() / iperf.cpuSecondsPerGb() : Double.NaN;
        report.add(row.against("iperf3 -R, " + count, t, c, "tput >= 0.95x", t >= 0.95));
        report.add(Row.of("remote", "iperf3 -R, " + count, iperf)
            .withNote(String.format("to %s:%d; CPU s/GB is this host's; server CPU %.3f s/GB; sender"
                + " (server) retransmits %s; %s", uri.host(), iperf3Port,
                iperfServerCpu / (iperf.bytes() / 1e9), iperfRetransmits < 0 ? "not reported" : iperfRetransmits,
                iperfSeen.describe())));
      } else {
        report.add(row);
      }
      if (toDevice) {
        report.add(Row.of("remote", "ours into GPU memory, " + count, device).withNote("as cuDF reads:"
            + " pinned chunks copied to the device as they arrive, or RDMA into it; CPU s/GB is this host's"));
      }
    }
    if (iperfAbsent != null) {
      report.context("iperf3", "none beside ours: " + iperfAbsent);
    }
  }

  /** The server's process CPU so far, or null when its STATUS does not say. */
  private Long serverCpuMillis() {
    Map<String, Long> counters = options.serverStatus(uri);
    return counters.get("processCpuMillis");
  }
}
