package io.gpudirect.transport.rdma;

import io.gpudirect.memory.BufferAllocator;
import io.gpudirect.protocol.ErrorResponse;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.protocol.ProtocolException;
import io.gpudirect.protocol.RdmaSetup;
import io.gpudirect.protocol.RdmaSetupAck;
import io.gpudirect.transport.Connection;
import io.gpudirect.transport.ConnectionOptions;
import io.gpudirect.transport.ConnectionThreads;
import io.gpudirect.transport.ServerErrorException;
import io.gpudirect.transport.Transport;
import io.gpudirect.transport.TransportException;
import io.gpudirect.transport.tcp.TcpTransport;
import io.gpudirect.verbs.RdmaEndpoint;
import io.gpudirect.verbs.RdmaUnavailableException;
import io.gpudirect.verbs.Verbs;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Reads over RDMA: a TCP connection for the handshake and control calls, offering
 * {@link Protocol#CAP_RDMA}; when the server has it too, an RDMA_SETUP on that connection
 * and a queue pair to the port the server names (see docs/protocol.md). A server without RDMA
 * makes {@link #connect} throw {@link RdmaUnavailableException}, which the caller may turn
 * into a fallback to TCP.
 */
public final class RdmaTransport implements Transport {
  /** Reads outstanding per queue pair the client asks for; the server may grant fewer. */
  public static final int DEFAULT_CREDITS = 16;

  private final Verbs verbs;
  private final int credits;
  private final BufferAllocator allocator;
  private final ConnectionThreads threads;
  private final TcpTransport tcp;

  /** Its connections check checksums and handshake deadlines on {@code threads}, which the caller owns. */
  public RdmaTransport(Verbs verbs, ConnectionThreads threads) {
    this(verbs, DEFAULT_CREDITS, BufferAllocator.root(), threads);
  }

  public RdmaTransport(Verbs verbs, int credits, BufferAllocator allocator, ConnectionThreads threads) {
    if (credits <= 0) {
      throw new IllegalArgumentException("RDMA credits must be positive: " + credits);
    }
    this.verbs = verbs;
    this.credits = credits;
    this.allocator = allocator;
    this.threads = threads;
    this.tcp = new TcpTransport(threads, allocator);
  }

  @Override
  public String name() {
    return verbs.carrier();
  }

  /** Its connections read into registered GPU memory: see {@link RdmaConnection#deviceReads}. */
  @Override
  public boolean readsIntoDevice() {
    return true;
  }

  /**
   * {@inheritDoc} The chunk: the server puts a window into memory registered before it asks,
   * of the most the window may be, so the server's 64 MiB would be that much per small block.
   */
  @Override
  public int blockWindow(int maxReadLength, int chunkLength) {
    return chunkLength;
  }

  public Verbs verbs() {
    return verbs;
  }

  @Override
  public RdmaConnection connect(InetSocketAddress server, ConnectionOptions options) {
    Connection control = tcp.connect(server, options.withRdma(true));
    String name = "gpudirect server " + RdmaEndpoint.describe(control.peer());
    try {
      boolean ucx = verbs.wire() == Verbs.Wire.UCX;
      long wanted = ucx ? Protocol.CAP_RDMA_UCX : Protocol.CAP_RDMA;
      if ((control.capabilities() & wanted) == 0) {
        if ((control.capabilities() & (Protocol.CAP_RDMA | Protocol.CAP_RDMA_UCX)) != 0) {
          throw new RdmaUnavailableException(name + " serves RDMA through " + (ucx ? "DiSNI (RDMA CM)"
              : "UCX") + ", and this client runs " + (ucx ? "UCX" : "DiSNI"), "set rdma.provider="
              + (ucx ? "disni" : "ucx") + " on the client, or start the server with --rdma-provider "
              + (ucx ? "ucx" : "disni"), null, name + " serves RDMA through " + (ucx ? "DiSNI" : "UCX"));
        }
        throw new RdmaUnavailableException(name + " does not serve RDMA",
            "start it with --rdma on (needs UCX (libucx0) or libdisni on the server)", null);
      }
      Message answer = control.call(new RdmaSetup(1, credits))
          .get(options.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
      if (answer instanceof ErrorResponse e) {
        throw new ServerErrorException(e.code(), name + " refused RDMA_SETUP: " + e.message());
      }
      if (!(answer instanceof RdmaSetupAck ack)) {
        throw new ProtocolException(name + " answered RDMA_SETUP with " + answer.type());
      }
      if (ack.credits() > credits) {
        // The client sizes its memory by them: a server may grant fewer, never more.
        throw new ProtocolException(name + " granted " + ack.credits() + " RDMA credits where "
            + credits + " were asked for");
      }
      boolean crc = (control.capabilities() & Protocol.CAP_CRC32C) != 0;
      return RdmaConnection.open(control, ack, crc, verbs, options.connectTimeout(), allocator, threads);
    } catch (TimeoutException e) {
      control.close();
      throw new TransportException("RDMA_SETUP to " + name + ": no answer within "
          + options.connectTimeout(), e);
    } catch (ExecutionException e) {
      control.close();
      throw new TransportException("RDMA_SETUP to " + name + " failed: " + e.getCause().getMessage(),
          e.getCause());
    } catch (InterruptedException e) {
      control.close();
      Thread.currentThread().interrupt();
      throw new TransportException("Interrupted during RDMA_SETUP to " + name, e);
    } catch (RuntimeException e) {
      // RdmaConnection.open closes control itself; closing twice is harmless.
      control.close();
      throw e;
    }
  }
}
