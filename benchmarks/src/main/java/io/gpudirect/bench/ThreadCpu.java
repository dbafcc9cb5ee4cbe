package io.gpudirect.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where a run's CPU went, by thread role: samples every live thread's CPU time while the run
 * goes on (threads of a closed client are gone by the end), and groups threads by name with
 * their numbers stripped. What the process used beyond all Java threads is the JVM's own work
 * (JIT compilers, GC).
 */
final class ThreadCpu implements AutoCloseable {
  private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
  private final Map<Long, Long> cpuById = new ConcurrentHashMap<>();
  private final Map<Long, Long> userById = new ConcurrentHashMap<>();
  private final Map<Long, Long> userStartById = new ConcurrentHashMap<>();
  private final Map<Long, Long> allocatedById = new ConcurrentHashMap<>();
  private final Map<Long, Long> allocatedStartById = new ConcurrentHashMap<>();
  private final Map<Long, String> nameById = new ConcurrentHashMap<>();
  private final Map<Long, Long> startById = new ConcurrentHashMap<>();
  private final long processStart = Cpu.processNanos();
  private final Thread sampler = new Thread(this::loop, "bench-thread-cpu");
  private volatile boolean done;

  ThreadCpu() {
    sample();
    for (Map.Entry<Long, Long> e : cpuById.entrySet()) {
      startById.put(e.getKey(), e.getValue());
    }
    allocatedStartById.putAll(allocatedById);
    userStartById.putAll(userById);
    sampler.setDaemon(true);
    sampler.start();
  }

  private void loop() {
    while (!done) {
      sample();
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void sample() {
    for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
      if (info == null) {
        continue;
      }
      nameById.putIfAbsent(info.getThreadId(), info.getThreadName());
      long cpu = threads.getThreadCpuTime(info.getThreadId());
      long allocated = ((com.sun.management.ThreadMXBean) threads).getThreadAllocatedBytes(info.getThreadId());
      if (allocated > 0) {
        allocatedById.merge(info.getThreadId(), allocated, Math::max);
      }
      if (cpu > 0) {
        cpuById.merge(info.getThreadId(), cpu, Math::max);
      }
      long user = threads.getThreadUserTime(info.getThreadId());
      if (user > 0) {
        userById.merge(info.getThreadId(), user, Math::max);
      }
    }
  }

  /** CPU seconds by thread role, plus "JVM (JIT, GC)" for the rest of the process's time. */
  Map<String, Double> secondsByRole() {
    done = true;
    sampler.interrupt();
    sample();
    Map<String, Double> out = byRole(cpuById, startById);
    double javaThreads = out.values().stream().mapToDouble(Double::doubleValue).sum();
    out.put("JVM (JIT, GC)", (Cpu.processNanos() - processStart) / 1e9 - javaThreads);
    return out;
  }

  /**
   * User-mode CPU seconds by thread role since this started (the rest of a role's time in
   * {@link #secondsByRole} is the kernel's: system calls, copies, the softirqs it ran); call
   * after {@link #secondsByRole}, which takes the last sample.
   */
  Map<String, Double> userSecondsByRole() {
    return byRole(userById, userStartById);
  }

  /** Nanoseconds per thread since its start value, in seconds summed by role. */
  private Map<String, Double> byRole(Map<Long, Long> nanosById, Map<Long, Long> startNanosById) {
    Map<String, Double> out = new TreeMap<>();
    for (Map.Entry<Long, Long> e : nanosById.entrySet()) {
      out.merge(role(e.getKey()), (e.getValue() - startNanosById.getOrDefault(e.getKey(), 0L)) / 1e9, Double::sum);
    }
    return out;
  }

  /** Heap bytes allocated by thread role since this started. */
  Map<String, Long> allocatedByRole() {
    Map<String, Long> out = new TreeMap<>();
    for (Map.Entry<Long, Long> e : allocatedById.entrySet()) {
      out.merge(role(e.getKey()), e.getValue() - allocatedStartById.getOrDefault(e.getKey(), 0L), Long::sum);
    }
    return out;
  }

  /** A thread's name without its numbers: the role its pool's threads share. */
  private String role(long threadId) {
    return nameById.getOrDefault(threadId, "?").replaceAll("[-#]?[0-9.:]+", "").replaceAll("-+$", "");
  }

  @Override
  public void close() {
    done = true;
    sampler.interrupt();
  }
}
