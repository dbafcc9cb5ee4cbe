package io.gpudirect.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gpudirect.gpu.GpuTest;
import io.gpudirect.server.BlockServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code gpudirect bench gpudirect://HOST:PORT/PATH} against a real server on loopback, standing
 * in for a remote one: every figure it reports is there and positive, iperf3 runs beside it when
 * an iperf3 server answers (and the report says so plainly when none does), and a port where
 * nothing listens is an error that names the server.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RemoteLinkTest {
  @TempDir static Path root;
  static BlockServer server;

  @BeforeAll
  static void start() throws IOException {
    BenchCommand.writeRandom(root.resolve("link.bin"), 8 << 20);
    server = BlockServer.builder().root(root).bindAddress("127.0.0.1").port(0).build().start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  @Test
  void measuresOneAndFourStreamsWithCpuOfBothEndsAndBesideIperf3() throws Exception {
    boolean iperf = Iperf3.available();
    int iperfPort = freePort();
    Process iperfServer = iperf ? new ProcessBuilder("iperf3", "-s", "-B", "127.0.0.1", "-p",
        Integer.toString(iperfPort)).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start() : null;
    try {
      if (iperf) {
        awaitListening(iperfPort);
      }
      JsonNode report = json(bench("--iperf3-port", Integer.toString(iperfPort)));
      List<String> names = new ArrayList<>();
      for (JsonNode row : report.get("rows")) {
        names.add(row.get("name").asText());
        assertEquals("remote", row.get("section").asText());
        assertTrue(row.get("gbit_per_s").asDouble() > 0, row.toString());
        assertTrue(row.get("cpu_s_per_gb").asDouble() > 0, row.toString());
        assertTrue(row.get("note").asText().contains("server CPU"), row.toString());
      }
      assertTrue(names.contains("ours, 1 stream") && names.contains("ours, 4 streams"), names.toString());
      assertTrue(report.get("file").asText().contains("link.bin") && report.get("file").asText().contains("8 MiB"),
          report.toString());
      if (iperf) {
        assertTrue(names.contains("iperf3 -R, 1 stream") && names.contains("iperf3 -R, 4 streams"), names.toString());
        assertTrue(report.get("rows").get(0).get("reference").asText().startsWith("iperf3 -R"), report.toString());
        assertEquals(null, report.get("iperf3"), report.toString());
      }
    } finally {
      if (iperfServer != null) {
        iperfServer.destroy();
        iperfServer.waitFor(5, TimeUnit.SECONDS);
      }
    }
  }

  /** On a GPU machine with cuDF: the same file also into device memory, at each stream count. */
  @Test
  @GpuTest
  void readsIntoGpuMemoryWhereThereIsAGpu() throws Exception {
    JsonNode report = json(bench("--iperf3-port", Integer.toString(freePort())));
    assertTrue(report.get("gpu").asText().startsWith("also into GPU memory"), report.toString());
    List<String> names = new ArrayList<>();
    for (JsonNode row : report.get("rows")) {
      names.add(row.get("name").asText());
      assertTrue(row.get("gbit_per_s").asDouble() > 0, row.toString());
    }
    assertTrue(names.contains("ours into GPU memory, 1 stream")
        && names.contains("ours into GPU memory, 4 streams"), names.toString());
  }

  @Test
  void saysPlainlyWhenNoIperf3ServerAnswers() throws Exception {
    int closed = freePort();
    JsonNode report = json(bench("--streams", "2", "--iperf3-port", Integer.toString(closed)));
    assertEquals(1, report.get("rows").size(), report.toString());
    assertEquals("ours, 2 streams", report.get("rows").get(0).get("name").asText());
    String said = report.get("iperf3").asText();
    assertTrue(report.get("gpu").asText().startsWith("none used") || report.get("gpu").asText().startsWith("also"),
        report.toString());
    assertTrue(Iperf3.available()
        ? said.contains("no iperf3 server answered on 127.0.0.1:" + closed) && said.contains("iperf3 -s")
        : said.contains("not installed"), said);
  }

  @Test
  void nothingListeningIsAnErrorNamingTheServer() throws Exception {
    int closed = freePort();
    AtomicReference<Exception> thrown = new AtomicReference<>();
    CommandLine cli = new CommandLine(new BenchCommand());
    cli.setOut(new PrintWriter(new StringWriter(), true));
    cli.setErr(new PrintWriter(new StringWriter(), true));
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      thrown.set(e);
      return 1;
    });
    assertNotEquals(0, cli.execute("gpudirect://127.0.0.1:" + closed + "/link.bin", "--no-progress"));
    assertNotNull(thrown.get());
    String message = thrown.get().getMessage();
    assertTrue(message.contains("127.0.0.1:" + closed) && message.contains("Is a gpudirect server running there"),
        message);
  }

  /** The bar counts the steps that run: it ended at 44% where no GPU and no iperf3 took their planned steps. */
  @Test
  void theProgressBarEndsFullWhateverRuns() throws Exception {
    ByteArrayOutputStream drawn = new ByteArrayOutputStream();
    BenchCommand command = new BenchCommand();
    command.progressTo = new PrintStream(drawn, true, StandardCharsets.UTF_8);
    CommandLine cli = new CommandLine(command);
    cli.setOut(new PrintWriter(new StringWriter(), true));
    assertEquals(0, cli.execute("gpudirect://127.0.0.1:" + server.port() + "/link.bin", "--duration", "0.3",
        "--rounds", "2", "--iperf3-port", Integer.toString(freePort())));
    List<String> frames = Arrays.stream(drawn.toString(StandardCharsets.UTF_8).split("\r"))
        .filter(f -> f.contains("%")).toList();
    assertTrue(frames.get(frames.size() - 1).contains("100%"), "the last frame: " + frames.get(frames.size() - 1));
  }

  private static String bench(String... extra) {
    List<String> args = new ArrayList<>(List.of("gpudirect://127.0.0.1:" + server.port() + "/link.bin",
        "--duration", "0.5", "--rounds", "1", "--json", "--no-progress"));
    args.addAll(List.of(extra));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cli = new CommandLine(new BenchCommand());
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    assertEquals(0, cli.execute(args.toArray(new String[0])), () -> "bench failed: " + err);
    return out.toString();
  }

  private static JsonNode json(String text) throws IOException {
    return new ObjectMapper().readTree(text);
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static void awaitListening(int port) throws InterruptedException {
    for (int i = 0; i < 100; i++) {
      try (java.net.Socket s = new java.net.Socket(InetAddress.getLoopbackAddress(), port)) {
        return;
      } catch (IOException e) {
        Thread.sleep(100);
      }
    }
    throw new AssertionError("iperf3 -s did not listen on port " + port);
  }
}
