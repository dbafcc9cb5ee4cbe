package io.gpudirect.client;

/**
 * Counters of a {@link RemoteStore}. {@code fetchNanos} is wall time spent waiting for read
 * payloads, summed over reads.
 */
public record TransferStats(long bytesFetched, long reads, long fetchNanos, long retries) {}
