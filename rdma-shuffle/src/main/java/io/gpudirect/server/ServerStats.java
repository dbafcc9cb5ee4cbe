package io.gpudirect.server;

/** Counters of one {@link BlockServer} since it started. */
public record ServerStats(long bytesSent, long requests, long errors, long connectionsAccepted,
    long connectionsActive, long connectionsRejected, long authFailures) {}
