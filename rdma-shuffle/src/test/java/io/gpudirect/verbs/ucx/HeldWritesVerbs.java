package io.gpudirect.verbs.ucx;

import io.gpudirect.verbs.Access;
import io.gpudirect.verbs.MemoryRegion;
import io.gpudirect.verbs.QueueSizes;
import io.gpudirect.verbs.RdmaEndpoint;
import io.gpudirect.verbs.RdmaListener;
import io.gpudirect.verbs.Verbs;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Real verbs (UCX here), with a server's WRITEs (and the SENDs behind them) held back on request and its endpoints killable:
 * the fault hooks of the transport conformance suite. Not a double: every verb runs on the
 * real provider, held WRITEs only run later, and killing closes the real endpoints at once, so
 * the client sees UCX's own error for a peer that went away mid-read.
 */
final class HeldWritesVerbs implements Verbs {
  private final Verbs real;
  private final List<Endpoint> servers = new ArrayList<>();
  private final List<Runnable> held = new ArrayList<>();
  private boolean holding;

  HeldWritesVerbs(Verbs real) {
    this.real = real;
  }

  synchronized void holdWrites() {
    holding = true;
  }

  /** How many WRITEs and SENDs are held back now. */
  synchronized int held() {
    return held.size();
  }

  /** Runs the held WRITEs (those of a killed endpoint complete as flushed) and stops holding. */
  void releaseWrites() {
    List<Runnable> run;
    synchronized (this) {
      holding = false;
      run = new ArrayList<>(held);
      held.clear();
    }
    run.forEach(Runnable::run);
  }

  /** Closes every server-side endpoint without a goodbye to the client. */
  void killServers() {
    List<Endpoint> all;
    synchronized (this) {
      all = new ArrayList<>(servers);
    }
    all.forEach(e -> e.real.close());
  }

  @Override
  public String describe() {
    return real.describe() + ", writes held on request";
  }

  @Override
  public Wire wire() {
    return real.wire();
  }

  @Override
  public String carrier() {
    return real.carrier();
  }

  @Override
  public RdmaEndpoint connect(InetSocketAddress server, Duration timeout, QueueSizes sizes, EndpointSetup setup) {
    return real.connect(server, timeout, sizes, setup);
  }

  @Override
  public RdmaListener listen(InetSocketAddress bind, QueueSizes sizes, EndpointSetup setup) {
    return real.listen(bind, sizes, ep -> {
      Endpoint e = new Endpoint(ep);
      synchronized (this) {
        servers.add(e);
      }
      return setup.prepare(e);
    });
  }

  private final class Endpoint implements RdmaEndpoint {
    final RdmaEndpoint real;

    Endpoint(RdmaEndpoint real) {
      this.real = real;
    }

    @Override
    public InetSocketAddress peer() {
      return real.peer();
    }

    @Override
    public void admit() {
      real.admit();
    }

    @Override
    public MemoryRegion register(long address, long length, Set<Access> access) {
      return real.register(address, length, access);
    }

    @Override
    public MemoryRegion register(ByteBuffer direct, Set<Access> access) {
      return real.register(direct, access);
    }

    @Override
    public void postRecv(long wrId, MemoryRegion region, long offset, int length) {
      real.postRecv(wrId, region, offset, length);
    }

    @Override
    public void postSend(long wrId, MemoryRegion region, long offset, int length) {
      // A SEND after held WRITEs waits behind them, as a queue pair would keep it; one with
      // nothing held before it (the server's RDMA_BOUND) goes.
      synchronized (HeldWritesVerbs.this) {
        if (holding && !held.isEmpty()) {
          held.add(() -> real.postSend(wrId, region, offset, length));
          return;
        }
      }
      real.postSend(wrId, region, offset, length);
    }

    @Override
    public void postWrite(long wrId, MemoryRegion region, long offset, int length, long remoteAddress, int rkey) {
      synchronized (HeldWritesVerbs.this) {
        if (holding) {
          held.add(() -> real.postWrite(wrId, region, offset, length, remoteAddress, rkey));
          return;
        }
      }
      real.postWrite(wrId, region, offset, length, remoteAddress, rkey);
    }

    @Override
    public java.util.concurrent.CompletableFuture<Void> released() {
      return real.released();
    }

    @Override
    public void close() {
      real.close();
    }
  }
}
