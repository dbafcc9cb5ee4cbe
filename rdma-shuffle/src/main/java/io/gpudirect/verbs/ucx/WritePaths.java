package io.gpudirect.verbs.ucx;

import java.util.concurrent.atomic.LongAdder;

/**
 * How the WRITEs of one {@link UcxVerbs} travel: as UCX puts where a NIC may carry them (see
 * {@link UcxVerbs#nativePuts(UcxVerbs.Reach)}), else as frames on the endpoint's stream; and how many went
 * each way, so that a test can tell which path ran.
 */
final class WritePaths {
  /** Whether this side can take or issue a put that a NIC carries. */
  final boolean nativePuts;
  final LongAdder puts = new LongAdder();
  final LongAdder streamWrites = new LongAdder();

  WritePaths(boolean nativePuts) {
    this.nativePuts = nativePuts;
  }
}
