package io.gpudirect.dataset;

import io.gpudirect.client.GpuDirectUri;
import io.gpudirect.protocol.FileVersion;
import java.io.Serializable;

/**
 * One data file on one server, as listed at planning time. Its {@code version} travels with
 * the scan's partitions, and every read of the file on an executor names it: a file rewritten
 * after planning, or while a task reads it, fails the task naming the file, rather than giving
 * rows of a file the plan never saw.
 */
public record DataFile(GpuDirectUri uri, long length, FileVersion version, DataFormat format) implements Serializable {}
