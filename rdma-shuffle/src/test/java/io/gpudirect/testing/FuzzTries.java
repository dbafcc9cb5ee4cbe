package io.gpudirect.testing;

import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * Scales the tries of every jqwik fuzz property by {@code -Dgpudirect.fuzz.scale=N} (1 by
 * default), so that CI runs the few seconds each {@code @Property(tries = ...)} names while a
 * local campaign runs N times as many inputs from the same fixed seed. Use with
 * {@code @AddLifecycleHook(FuzzTries.class)} on the property's class. Prints the tries and
 * the time each property took, the figures docs/benchmarks.md cites as inputs fuzzed.
 */
public final class FuzzTries implements AroundPropertyHook {
  /** The multiplier: a system property rather than a constant, as annotations need constants. */
  public static int scale() {
    return Math.max(1, Integer.getInteger("gpudirect.fuzz.scale", 1));
  }

  @Override
  public PropertyExecutionResult aroundProperty(PropertyLifecycleContext context, PropertyExecutor property) {
    int tries = context.attributes().tries().orElseThrow(
        () -> new IllegalStateException(context.label() + ": a fuzz property names its tries"));
    context.attributes().setTries(Math.multiplyExact(tries, scale()));
    long start = System.nanoTime();
    PropertyExecutionResult result = property.execute();
    System.out.printf("fuzz %s.%s: %d tries (x%d), %s, %d ms%n", context.containerClass().getSimpleName(),
        context.targetMethod().getName(), result.countTries(), scale(), result.status(),
        (System.nanoTime() - start) / 1_000_000);
    return result;
  }

  /** Added to a class, it reaches the properties in it (and in its nested classes). */
  @Override
  public PropagationMode propagateTo() {
    return PropagationMode.ALL_DESCENDANTS;
  }

  @Override
  public int aroundPropertyProximity() {
    // Outermost: the time includes everything jqwik does for the property.
    return -100;
  }
}
