package io.gpudirect.testing;

import io.gpudirect.protocol.Auth;
import io.gpudirect.protocol.AuthOk;
import io.gpudirect.protocol.AuthResponse;
import io.gpudirect.protocol.HelloAck;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.Protocol;
import io.gpudirect.protocol.RdmaSetup;
import io.gpudirect.protocol.RdmaSetupAck;
import java.io.IOException;

/**
 * An authenticated TCP connection, driven by hand, that asked for a UCX queue pair: its answer
 * names the RDMA port and the token a queue pair must present. The offer lives as long as the
 * connection.
 */
public final class QueuePairOffer implements AutoCloseable {
  public final RawPeer control;
  public final RdmaSetupAck ack;

  private QueuePairOffer(RawPeer control, RdmaSetupAck ack) {
    this.control = control;
    this.ack = ack;
  }

  /** Logs in to the server on {@code port} (proving {@code secret}, when not null) and asks. */
  public static QueuePairOffer take(int port, byte[] secret) throws IOException {
    RawPeer peer = login(port, secret);
    try {
      peer.send(new RdmaSetup(1, 16));
      Message m = peer.receive();
      if (!(m instanceof RdmaSetupAck a)) {
        throw new IOException("RDMA_SETUP answered with " + m);
      }
      return new QueuePairOffer(peer, a);
    } catch (IOException | RuntimeException e) {
      peer.close();
      throw e;
    }
  }

  /** An authenticated connection that offered UCX RDMA in its HELLO, ready for requests. */
  public static RawPeer login(int port, byte[] secret) throws IOException {
    RawPeer peer = new RawPeer(port);
    try {
      Message hello = peer.hello(Protocol.VERSION, Protocol.CAP_TCP | Protocol.CAP_CRC32C
          | Protocol.CAP_RDMA | Protocol.CAP_RDMA_UCX);
      if (!(hello instanceof HelloAck ack)) {
        throw new IOException("HELLO answered with " + hello);
      }
      if (ack.authRequired()) {
        peer.send(new AuthResponse(Auth.clientProof(secret, ack.serverNonce(), peer.clientNonce)));
        Message ok = peer.receive();
        if (!(ok instanceof AuthOk)) {
          throw new IOException("login answered with " + ok);
        }
      }
      return peer;
    } catch (IOException | RuntimeException e) {
      peer.close();
      throw e;
    }
  }

  public int rdmaPort() {
    return ack.rdmaPort();
  }

  @Override
  public void close() throws IOException {
    control.close();
  }
}
