package io.gpudirect.spark;

import io.gpudirect.remote.GpuDirectUri;
import java.io.Serializable;

/** One data file on one server, as listed at planning time. */
record DataFile(GpuDirectUri uri, long length, DataFormat format) implements Serializable {}
