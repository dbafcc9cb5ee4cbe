package io.gpudirect.client;

/** What the server says about one path below its root. */
public record FileEntry(String path, long length, long modifiedMillis, boolean directory) {}
