package io.gpudirect.verbs;

/** Access flags of a registration ({@code IBV_ACCESS_*}). */
public enum Access {
  /** The local NIC may write it: needed by receive buffers and by any remotely writable region. */
  LOCAL_WRITE,
  /** The peer may RDMA-WRITE into it (a client's destination). */
  REMOTE_WRITE,
  REMOTE_READ
}
