package io.gpudirect.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * iperf3 over loopback, the wire reference of issue 5: a one-off server ({@code -s -1}) and a
 * client with {@code -J}, whose JSON gives the received rate and both ends' CPU use
 * ({@code cpu_utilization_percent}: host_total for the client, remote_total for the server,
 * each in percent of one core over the test).
 */
final class Iperf3 {
  private static final Pattern RECEIVED = Pattern.compile(
      "\"sum_received\"\\s*:\\s*\\{[^}]*?\"bytes\"\\s*:\\s*([0-9.eE+]+)[^}]*?\"bits_per_second\"\\s*:\\s*([0-9.eE+]+)");
  private static final Pattern SECONDS = Pattern.compile(
      "\"sum_received\"\\s*:\\s*\\{[^}]*?\"seconds\"\\s*:\\s*([0-9.eE+]+)");
  private static final Pattern HOST_CPU = Pattern.compile("\"host_total\"\\s*:\\s*([0-9.eE+]+)");
  private static final Pattern ERROR = Pattern.compile("\"error\"\\s*:");
  private static final Pattern REMOTE_CPU = Pattern.compile("\"remote_total\"\\s*:\\s*([0-9.eE+]+)");

  private static final Pattern SENDER_RETRANSMITS = Pattern.compile(
      "\"sum_sent\"\\s*:\\s*\\{[^}]*?\"retransmits\"\\s*:\\s*([0-9]+)");
  private static final Pattern ERROR_TEXT = Pattern.compile("\"error\"\\s*:\\s*\"([^\"]*)\"");
  /** How long a client waits for a remote iperf3 server to accept before saying none answers. */
  static final int CONNECT_TIMEOUT_MILLIS = 3000;

  private Iperf3() {}

  /**
   * iperf3 to a server someone runs on {@code host} ({@code iperf3 -s}), in reverse ({@code -R}):
   * the server sends, as a gpudirect server does. Throws {@link NoServer} when none answers
   * within {@link #CONNECT_TIMEOUT_MILLIS}.
   */
  static Remote toHost(String host, int port, int streams, double seconds) throws Exception {
    int t = (int) Math.max(1, Math.round(seconds));
    Process client = new ProcessBuilder("iperf3", "-c", host, "-p", Integer.toString(port), "-R",
        "-t", Integer.toString(t), "-J", "-P", Integer.toString(streams),
        "--connect-timeout", Integer.toString(CONNECT_TIMEOUT_MILLIS)).redirectErrorStream(true).start();
    String out = new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!client.waitFor(t + 30L, TimeUnit.SECONDS)) {
      client.destroyForcibly();
      throw new IOException("iperf3 to " + host + ":" + port + " did not finish within " + (t + 30) + " s");
    }
    Matcher error = ERROR_TEXT.matcher(out);
    if (client.exitValue() != 0 || error.find()) {
      String why = error.find(0) ? error.group(1) : out.strip();
      throw new NoServer("no iperf3 server answered on " + host + ":" + port + " (" + why
          + "); start one there with iperf3 -s to see the plain wire beside gpudirect");
    }
    Matcher h = HOST_CPU.matcher(out);
    Matcher m = REMOTE_CPU.matcher(out);
    Matcher r = SENDER_RETRANSMITS.matcher(out);
    Measurement whole = parse(out);
    double client0 = h.find() ? Double.parseDouble(h.group(1)) / 100 * whole.seconds() : Double.NaN;
    double server0 = m.find() ? Double.parseDouble(m.group(1)) / 100 * whole.seconds() : Double.NaN;
    return new Remote(new Measurement(whole.bytes(), whole.seconds(), client0), server0,
        r.find() ? Long.parseLong(r.group(1)) : -1);
  }

  /**
   * One run to a remote iperf3 server: {@code client}'s CPU is this host's ({@code host_total}),
   * {@code serverCpuSeconds} the server's ({@code remote_total}), {@code retransmits} the
   * sender's, the server's (-1 when iperf3 did not say).
   */
  record Remote(Measurement client, double serverCpuSeconds, long retransmits) {}

  /** No iperf3 server answered: said plainly in the report, not an error of the bench. */
  static final class NoServer extends IOException {
    NoServer(String message) {
      super(message);
    }
  }

  /** Whether an {@code iperf3} binary runs here. */
  static boolean available() {
    try {
      Process p = new ProcessBuilder("iperf3", "--version").redirectErrorStream(true).start();
      p.getInputStream().readAllBytes();
      return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  static Measurement run(int streams, double seconds) throws Exception {
    int t = (int) Math.max(1, Math.round(seconds));
    return withServer(true, port -> parse(client(port, t + 30L, "-t", Integer.toString(t), "-P",
        Integer.toString(streams))));
  }

  /**
   * {@code iperf3 -F file}: the sender reads {@code file} (read(2) into its buffer, then write)
   * instead of sending one buffer over and over, as a file server must; the fair reference for
   * a file server on loopback, where plain iperf3 measures a buffer that stays in cache
   * (issue 16). A run ends when the file has been sent once, so runs follow one another, to one
   * server, until {@code seconds} have been measured.
   */
  static Measurement runFile(Path file, int streams, double seconds) throws Exception {
    return withServer(false, port -> {
      Measurement sum = Measurement.NONE;
      while (sum.seconds() < seconds) {
        sum = sum.plus(parse(client(port, 120, "-F", file.toString(), "-P", Integer.toString(streams))));
      }
      return sum;
    });
  }

  /** What runs against a loopback iperf3 server on {@code port}. */
  @FunctionalInterface
  private interface Runs {
    Measurement on(int port) throws Exception;
  }

  /** A loopback iperf3 server for {@code runs}: for one test ({@code -1}) or for any number. */
  private static Measurement withServer(boolean oneOff, Runs runs) throws Exception {
    int port;
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = probe.getLocalPort();
    }
    List<String> cmd = new ArrayList<>(List.of("iperf3", "-s", "-B", "127.0.0.1", "-p",
        Integer.toString(port)));
    if (oneOff) {
      cmd.add("-1");
    }
    Process server = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    try {
      return runs.on(port);
    } finally {
      server.destroy();
      if (!server.waitFor(5, TimeUnit.SECONDS)) {
        server.destroyForcibly();
      }
    }
  }

  /** One client run to the loopback server on {@code port}, its JSON; retried while the server is not yet listening. */
  private static String client(int port, long waitSeconds, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("iperf3", "-c", "127.0.0.1", "-p",
        Integer.toString(port), "-J"));
    cmd.addAll(List.of(args));
    for (int attempt = 0; attempt < 100; attempt++) {
      Process client = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!client.waitFor(waitSeconds, TimeUnit.SECONDS)) {
        client.destroyForcibly();
        throw new IOException("iperf3 client did not finish within " + waitSeconds + " s");
      }
      // iperf3 3.12 with -J may exit 0 with an "error" member instead of results.
      if (client.exitValue() == 0 && !ERROR.matcher(out).find()) {
        return out;
      }
      if (!out.contains("Connection refused")) {
        throw new IOException("iperf3 client failed: " + out.strip());
      }
      Thread.sleep(100);
    }
    throw new IOException("iperf3 server on port " + port + " did not start listening");
  }

  /** Bytes, seconds and CPU seconds (client plus server) from iperf3's {@code -J} output. */
  static Measurement parse(String json) {
    Matcher r = RECEIVED.matcher(json);
    Matcher s = SECONDS.matcher(json);
    Matcher h = HOST_CPU.matcher(json);
    Matcher m = REMOTE_CPU.matcher(json);
    if (!r.find() || !s.find() || !h.find() || !m.find()) {
      throw new IllegalStateException("Cannot read iperf3's JSON: no sum_received or"
          + " cpu_utilization_percent in " + json.substring(0, Math.min(400, json.length())));
    }
    double bytes = Double.parseDouble(r.group(1));
    double seconds = Double.parseDouble(s.group(1));
    double cpu = (Double.parseDouble(h.group(1)) + Double.parseDouble(m.group(1))) / 100 * seconds;
    return new Measurement((long) bytes, seconds, cpu);
  }
}
