package io.gpudirect.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gpudirect.cli.GpuDirectCli;
import io.gpudirect.protocol.Auth;
import io.gpudirect.protocol.AuthOk;
import io.gpudirect.protocol.AuthResponse;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.Hello;
import io.gpudirect.protocol.HelloAck;
import io.gpudirect.protocol.ListRequest;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.protocol.ReadData;
import io.gpudirect.protocol.ReadRequest;
import io.gpudirect.protocol.StatRequest;
import io.gpudirect.testing.SparkJvmFlags;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code gpudirect server} as an operator runs it: a child JVM started through the CLI's main
 * class, asked for its counters with {@code --status}, and stopped with SIGTERM while a large
 * read is in flight.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
// On the Spark 3.5 line only (spark35-line): the CLI ships in that build (bin/gpudirect), and the
// server it starts has no Spark in it.
@Tag("spark35-line")
class ServerProcessIT {
  private static final byte[] SECRET = "operator secret, long enough".getBytes(StandardCharsets.UTF_8);
  private static final int CHUNK = 32 << 20;

  @TempDir
  Path tmp;

  private Process server;
  private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
  private final StringBuffer output = new StringBuffer();

  @AfterEach
  void stopServer() throws InterruptedException {
    if (server != null && server.isAlive()) {
      server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void logsWhatItServesAnswersStatusAndFinishesAReadInFlightOnSigterm() throws Exception {
    Path root = Files.createDirectories(tmp.resolve("root"));
    byte[] big = new byte[2 * CHUNK];
    new Random(5).nextBytes(big);
    Files.write(root.resolve("big.bin"), big);
    Path secretFile = tmp.resolve("secret");
    Files.write(secretFile, SECRET);

    int port = start(root, secretFile);
    String served = waitForLine("serving ");
    assertTrue(served.contains(root.toString()), served);
    assertTrue(served.contains("read-only over tcp"), served);
    assertTrue(served.contains("authentication on"), served);
    assertTrue(served.contains("io.gpudirect:type=BlockServer,port=" + port), served);

    String uri = "gpudirect://127.0.0.1:" + port;
    String status = cli(0, "server", "--status", uri, "--secret-file", secretFile.toString());
    assertEquals(0, counter(status, "bytesSent"), status);
    assertTrue(counter(status, "uptimeMillis") > 0, status);
    // Without the secret the status is refused, like any request.
    String refused = cli(1, "server", "--status", uri);
    assertTrue(refused.contains("authentication") || refused.contains("secret"), refused);

    try (SocketChannel client = connect(port)) {
      ReadableByteChannel in = Channels.newChannel(client.socket().getInputStream());
      send(client, new ReadRequest(1, "big.bin", 0, CHUNK));
      assertInstanceOf(ReadData.class, Frames.read(in));
      ByteBuffer first = ByteBuffer.allocate(CHUNK);
      first.limit(1 << 20);
      Frames.readFully(in, first, false);

      // SIGTERM with 31 MiB of the first chunk still to send.
      // SIGTERM through the handle: Process.destroy() would also close our end of its output.
      assertTrue(server.toHandle().destroy());
      waitForLine("shutting down");
      Thread.sleep(600);
      assertTrue(server.isAlive(), "the server waits for the read in flight");
      assertThrows(ConnectException.class, () -> connect(port).close(), "no new connections while draining");

      first.limit(CHUNK);
      Frames.readFully(in, first, false);
      assertEquals(trailer(in), crc(first.array()));
      // The client's next chunk, asked for as soon as the first arrived, is served too.
      send(client, new ReadRequest(2, "big.bin", CHUNK, CHUNK));
      assertInstanceOf(ReadData.class, Frames.read(in));
      ByteBuffer rest = ByteBuffer.allocate(CHUNK);
      Frames.readFully(in, rest, false);
      assertEquals(trailer(in), crc(rest.array()));
      assertArrayEquals(Arrays.copyOfRange(big, 0, CHUNK), first.array());
      assertArrayEquals(Arrays.copyOfRange(big, CHUNK, 2 * CHUNK), rest.array());
    }
    assertTrue(server.waitFor(20, TimeUnit.SECONDS), "the server exits once idle: " + output);
    assertNotEquals(0, server.exitValue());
    String stopped = waitForLine("stopped:");
    assertTrue(stopped.contains("bytesSent=" + big.length), stopped);
  }

  /**
   * A server started in the C locale (issue 13): Java then turns file names into bytes as
   * ASCII ({@code sun.jnu.encoding} follows the locale, whatever {@code -Dfile.encoding} says),
   * so a non-ASCII name can be neither opened nor listed. Each request that meets one gets an
   * ERROR that names it and says to run the server with a UTF-8 locale; the connection goes on,
   * and the requests pipelined behind are answered. (bin/gpudirect and the systemd unit start
   * the server with a UTF-8 locale; this is the server's answer when something else did not.)
   */
  @Test
  void inTheCLocaleANameItCannotRepresentIsAnErrorAndTheRequestsBehindItAreAnswered()
      throws Exception {
    Path root = Files.createDirectories(tmp.resolve("root"));
    byte[] plain = "plain ascii file".getBytes(StandardCharsets.US_ASCII);
    Files.write(root.resolve("plain.bin"), plain);
    // Made by the shell from its bytes, so that this JVM's own locale does not matter.
    Process touch = new ProcessBuilder("sh", "-c", "printf data > \"$(printf 'caf\\303\\251.bin')\"")
        .directory(root.toFile()).start();
    assertEquals(0, touch.waitFor());
    Path secretFile = tmp.resolve("secret");
    Files.write(secretFile, SECRET);
    int port = start(root, secretFile, Map.of("LANG", "C", "LC_ALL", "C"));

    try (SocketChannel client = connect(port)) {
      ReadableByteChannel in = Channels.newChannel(client.socket().getInputStream());
      // All four go out before any answer is read: pipelined, as clients send them.
      send(client, new ReadRequest(1, "caf\u00e9.bin", 0, 4));
      send(client, new StatRequest(2, "caf\u00e9.bin"));
      send(client, new ListRequest(3, "", ListRequest.FIRST_PAGE));
      send(client, new ReadRequest(4, "plain.bin", 0, plain.length));
      for (long id = 1; id <= 3; id++) {
        ErrorResponse e = assertInstanceOf(ErrorResponse.class, Frames.read(in));
        assertEquals(id, e.requestId());
        assertTrue(e.message().contains("UTF-8 locale"), e.message());
        assertTrue(e.message().contains(id == 3 ? "'caf" : "'caf\u00e9.bin'"), e.message());
      }
      ReadData d = assertInstanceOf(ReadData.class, Frames.read(in));
      assertEquals(4, d.requestId());
      ByteBuffer payload = ByteBuffer.allocate(plain.length);
      Frames.readFully(in, payload, false);
      assertArrayEquals(plain, payload.array());
      assertEquals(crc(plain), trailer(in));
    }
    assertTrue(!output.toString().contains("\tat "), "no stack trace in the log:\n" + output);
  }

  /** Starts {@code gpudirect server} in a child JVM; returns its port once it says it listens. */
  private int start(Path root, Path secretFile) throws Exception {
    return start(root, secretFile, Map.of());
  }

  /** As {@link #start(Path, Path)}, with {@code env} added to the child's environment. */
  private int start(Path root, Path secretFile, Map<String, String> env) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(SparkJvmFlags.FLAGS);
    command.addAll(List.of("-Xmx256m", "-cp", System.getProperty("java.class.path"), GpuDirectCli.class.getName(),
        "server", "--root", root.toString(), "--port", "0", "--secret-file", secretFile.toString(),
        "--shutdown-grace-seconds", "30"));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().putAll(env);
    server = builder.start();
    Thread pump = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line = r.readLine(); line != null; line = r.readLine()) {
          output.append(line).append('\n');
          lines.add(line);
        }
      } catch (IOException ignored) {
        // the process ended
      }
    }, "server-output");
    pump.setDaemon(true);
    pump.start();
    Matcher m = Pattern.compile("gpudirect server listening on [^:]+:(\\d+)").matcher(waitForLine("listening on"));
    assertTrue(m.find());
    return Integer.parseInt(m.group(1));
  }

  private String waitForLine(String part) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      String line = lines.poll(1, TimeUnit.SECONDS);
      if (line != null && line.contains(part)) {
        return line;
      }
    }
    throw new AssertionError("no line with '" + part + "' from the server:\n" + output);
  }

  /** Runs the CLI in this JVM, as {@code bin/gpudirect} would; returns what it printed. */
  private static String cli(int expectedExit, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream oldOut = System.out;
    PrintStream capture = new PrintStream(out, true, StandardCharsets.UTF_8);
    int code;
    try {
      System.setOut(capture);
      CommandLine cli = new CommandLine(new GpuDirectCli());
      cli.setErr(new java.io.PrintWriter(capture, true));
      cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
        capture.println("gpudirect: " + e.getMessage());
        return 1;
      });
      code = cli.execute(args);
    } finally {
      System.setOut(oldOut);
    }
    String printed = out.toString(StandardCharsets.UTF_8);
    assertEquals(expectedExit, code, printed);
    return printed;
  }

  private static long counter(String status, String name) {
    Matcher m = Pattern.compile("(?m)^\\s+" + name + "\\s+(\\d+)$").matcher(status);
    assertTrue(m.find(), name + " in\n" + status);
    return Long.parseLong(m.group(1));
  }

  /** A hand-driven client: the test must control exactly when payload bytes are read. */
  private static SocketChannel connect(int port) throws IOException {
    SocketChannel ch = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
    ch.socket().setSoTimeout(20_000);
    ReadableByteChannel in = Channels.newChannel(ch.socket().getInputStream());
    byte[] clientNonce = Auth.newNonce();
    writeFully(ch, ByteBuffer.wrap(Protocol.MAGIC));
    send(ch, new Hello(Protocol.VERSION, Protocol.CAP_TCP | Protocol.CAP_CRC32C, clientNonce));
    ByteBuffer magic = ByteBuffer.allocate(4);
    Frames.readFully(in, magic, false);
    HelloAck ack = (HelloAck) Frames.read(in);
    send(ch, new AuthResponse(Auth.clientProof(SECRET, ack.serverNonce(), clientNonce)));
    Message ok = Frames.read(in);
    assertInstanceOf(AuthOk.class, ok);
    return ch;
  }

  private static void send(SocketChannel ch, Message m) throws IOException {
    writeFully(ch, Frames.encode(m));
  }

  private static void writeFully(SocketChannel ch, ByteBuffer b) throws IOException {
    while (b.hasRemaining()) {
      ch.write(b);
    }
  }

  /** The CRC32C that trails a READ payload. */
  /** The CRC32C of a READ_DATA trailer, whose status must say the payload is good. */
  private static int trailer(ReadableByteChannel in) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(ReadData.TRAILER_BYTES);
    Frames.readFully(in, b, false);
    assertEquals(ReadData.PAYLOAD_GOOD, b.flip().get(), "trailer status");
    return b.getInt();
  }

  private static int crc(byte[] b) {
    CRC32C c = new CRC32C();
    c.update(b);
    return (int) c.getValue();
  }
}
