package io.gpudirect.transport;

import java.nio.ByteBuffer;

/**
 * Memory for a READ's payload that is taken only when the payload starts to arrive, not when
 * the request is sent (late binding). Requests pipelined on a connection wait their turn on
 * the wire; memory bound to them at send time would sit idle until then, and memory that
 * several requests per connection take in turn falls out of the CPU's cache before its bytes
 * come (docs/benchmarks.md, H200 profile: the "raw, kept" baseline). Bound late, a connection
 * holds memory only for the answer it is reading.
 */
@FunctionalInterface
public interface PayloadMemory {
  /**
   * Memory for the payload: a buffer whose remaining bytes equal the request's length. A
   * transport that reads from a socket calls this on the thread that reads the connection's
   * answers, once the answer's header is in and before any payload byte is written, at most
   * once per attempt, and never for a request refused before its payload; it may block until
   * memory is free, which holds back that connection's answers (back-pressure). A transport
   * whose peer writes into the memory (RDMA) calls it before the request is sent. Every call
   * for one read must give the same memory; what it throws fails that read alone.
   */
  ByteBuffer bind();
}
