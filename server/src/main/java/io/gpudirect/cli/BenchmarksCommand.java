package io.gpudirect.cli;

/**
 * A command of {@code bin/gpudirect} that lives in the benchmarks module ({@code demo},
 * {@code bench}): a picocli {@code @Command} that needs Spark, listed in that module's
 * {@code META-INF/services}, so that this module finds it without naming it.
 */
public interface BenchmarksCommand {}
