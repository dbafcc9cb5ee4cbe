package io.gpudirect.client;

import io.gpudirect.protocol.FileVersion;

/**
 * What the server says about one path below its root. {@code version} is what reads of the
 * file name so that they fail, rather than mix bytes, once the file has changed
 * ({@link FileVersion#ANY} for a directory).
 */
public record FileEntry(String path, long length, long modifiedMillis, boolean directory,
    FileVersion version) {}
