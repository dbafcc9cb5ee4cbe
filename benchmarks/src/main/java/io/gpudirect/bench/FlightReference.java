package io.gpudirect.bench;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightServer;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Arrow Flight Java, the peer users would otherwise pick: a DoGet server on loopback that holds
 * the Arrow file's record batches in memory (Flight's best case: no file read per request) and
 * streams them all for any ticket, and a client that drains the stream. Bytes counted are the
 * Arrow buffers the client receives.
 */
final class FlightReference implements AutoCloseable {
  private final BufferAllocator allocator = new RootAllocator();
  private final List<ArrowRecordBatch> batches = new ArrayList<>();
  private final Schema schema;
  private final FlightServer server;
  private final FlightClient client;

  FlightReference(Path arrowFile) throws IOException {
    try (FileChannel in = FileChannel.open(arrowFile, StandardOpenOption.READ);
         ArrowFileReader reader = new ArrowFileReader(in, allocator)) {
      VectorSchemaRoot root = reader.getVectorSchemaRoot();
      schema = root.getSchema();
      while (reader.loadNextBatch()) {
        batches.add(new VectorUnloader(root).getRecordBatch());
      }
    }
    server = FlightServer.builder(allocator, Location.forGrpcInsecure("127.0.0.1", 0), new Producer())
        .build().start();
    client = FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", server.getPort())).build();
  }

  /** Drains DoGet streams for about {@code seconds} (whole streams only). */
  Measurement run(double seconds) throws Exception {
    drain(); // warm-up, untimed
    long deadline = System.nanoTime() + (long) (seconds * 1e9);
    return Measurement.of(() -> {
      long bytes = 0;
      do {
        bytes += drain();
      } while (System.nanoTime() < deadline);
      return bytes;
    });
  }

  private long drain() throws Exception {
    long bytes = 0;
    try (FlightStream stream = client.getStream(new Ticket("all".getBytes(StandardCharsets.UTF_8)))) {
      while (stream.next()) {
        for (FieldVector v : stream.getRoot().getFieldVectors()) {
          bytes += v.getBufferSize();
        }
      }
    }
    return bytes;
  }

  private final class Producer extends NoOpFlightProducer {
    @Override
    public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
      try (VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator)) {
        VectorLoader loader = new VectorLoader(root);
        listener.start(root);
        for (ArrowRecordBatch b : batches) {
          loader.load(b);
          listener.putNext();
        }
        listener.completed();
      } catch (RuntimeException e) {
        listener.error(e);
      }
    }
  }

  @Override
  public void close() throws Exception {
    client.close();
    server.shutdown();
    server.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
    server.close();
    batches.forEach(ArrowRecordBatch::close);
    allocator.close();
  }
}
