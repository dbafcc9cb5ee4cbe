package io.gpudirect.transport;

import io.gpudirect.protocol.ChecksumAlgorithm;

/**
 * The part of a reduce partition that one window of a shuffle block held, where the partition
 * crosses the window's edge: its checksum ({@code value}, over {@code length} bytes from
 * {@code offset} within the partition) is combined with those of its other parts once all the
 * block's windows are in, and the whole compared with Spark's ({@code expected}). The partition
 * is named by its reduce id and where it starts in the block.
 */
public record PartitionPiece(ChecksumAlgorithm algorithm, int reduceId, long partitionStart,
    long partitionLength, int expected, long offset, long length, int value) {}
