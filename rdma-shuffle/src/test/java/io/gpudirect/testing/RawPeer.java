package io.gpudirect.testing;

import io.gpudirect.protocol.Auth;
import io.gpudirect.protocol.Frames;
import io.gpudirect.protocol.Hello;
import io.gpudirect.protocol.HelloAck;
import io.gpudirect.protocol.Message;
import io.gpudirect.protocol.Protocol;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/** A hand-driven protocol peer for tests that need to send what a real client never would. */
public final class RawPeer implements AutoCloseable {
  public final SocketChannel channel;
  public final byte[] clientNonce = Auth.newNonce();

  public RawPeer(int port) throws IOException {
    channel = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
    channel.socket().setSoTimeout(5000);
  }

  /**
   * With a fixed receive buffer of {@code receiveBufferBytes} (which turns off the kernel's
   * autotuning), so that a server sending a large answer blocks until this peer reads it.
   */
  public RawPeer(int port, int receiveBufferBytes) throws IOException {
    channel = SocketChannel.open();
    channel.socket().setReceiveBufferSize(receiveBufferBytes);
    channel.connect(new InetSocketAddress("127.0.0.1", port));
    channel.socket().setSoTimeout(5000);
  }

  /** From {@code localAddress} (another loopback address, 127.0.0.2 say), to 127.0.0.1. */
  public RawPeer(String localAddress, int port) throws IOException {
    channel = SocketChannel.open();
    channel.bind(new InetSocketAddress(localAddress, 0));
    channel.connect(new InetSocketAddress("127.0.0.1", port));
    channel.socket().setSoTimeout(5000);
  }

  public void sendRaw(byte[] bytes) throws IOException {
    ByteBuffer b = ByteBuffer.wrap(bytes);
    while (b.hasRemaining()) {
      channel.write(b);
    }
  }

  public void send(Message m) throws IOException {
    ByteBuffer b = Frames.encode(m);
    while (b.hasRemaining()) {
      channel.write(b);
    }
  }

  /** Sends magic and HELLO with {@code version}; returns the server's first message. */
  public Message hello(int version) throws IOException {
    return hello(version, Protocol.CAP_TCP | Protocol.CAP_CRC32C);
  }

  /** As {@link #hello(int)}, offering {@code capabilities}. */
  public Message hello(int version, long capabilities) throws IOException {
    sendRaw(Protocol.MAGIC);
    send(new Hello(version, capabilities, clientNonce));
    ByteBuffer magic = ByteBuffer.allocate(4);
    Frames.readFully(in(), magic, false);
    Protocol.checkMagic(magic.array(), 4, "test server");
    return receive();
  }

  public HelloAck handshake() throws IOException {
    return (HelloAck) hello(Protocol.VERSION);
  }

  public Message receive() throws IOException {
    return Frames.read(in());
  }

  public byte[] payload(int n) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(n);
    Frames.readFully(in(), b, false);
    return b.array();
  }

  /** The trailer that follows a READ payload (CRC32C negotiated): its CRC32C, once its status says good. */
  public int checksumTrailer() throws IOException {
    ByteBuffer b = ByteBuffer.allocate(io.gpudirect.protocol.ReadData.TRAILER_BYTES);
    Frames.readFully(in(), b, false);
    byte status = b.flip().get();
    if (status != io.gpudirect.protocol.ReadData.PAYLOAD_GOOD) {
      throw new IOException("READ payload voided by the server (status " + status + ")");
    }
    return b.getInt();
  }

  /** The status byte of the trailer that follows a READ payload; its CRC32C is skipped. */
  public byte trailerStatus() throws IOException {
    ByteBuffer b = ByteBuffer.allocate(io.gpudirect.protocol.ReadData.TRAILER_BYTES);
    Frames.readFully(in(), b, false);
    return b.get(0);
  }

  private java.nio.channels.ReadableByteChannel in() throws IOException {
    return java.nio.channels.Channels.newChannel(channel.socket().getInputStream());
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
