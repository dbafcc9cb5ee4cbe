package io.gpudirect.architecture;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which gpudirect package reaches which, by its imports (what ArchUnit sees) and by the class
 * names written in its strings (what it does not: {@code Class.forName}, a class named in a
 * conf value). Each arrow keeps one example, so that a cycle can be told class by class.
 */
final class PackageGraph {
  /** A gpudirect class's binary name, anywhere in a text. */
  private static final Pattern CLASS_NAME = Pattern.compile("\\bio\\.gpudirect(?:\\.[a-z_][a-z0-9_]*)*\\.[A-Z][A-Za-z0-9_$]*");

  /** An arrow between two packages, with what makes it. */
  record Arrow(String from, String to, String example, boolean byString) {
    @Override
    public String toString() {
      return from + " -> " + to + ": " + example;
    }
  }

  private final Map<String, Map<String, Arrow>> arrows = new HashMap<>();
  private final Set<Arrow> byString = new LinkedHashSet<>();

  static PackageGraph of(JavaClasses classes) {
    PackageGraph graph = new PackageGraph();
    for (JavaClass c : classes) {
      for (Dependency d : c.getDirectDependenciesFromSelf()) {
        String to = d.getTargetClass().getPackageName();
        if (to.startsWith("io.gpudirect")) {
          graph.add(new Arrow(c.getPackageName(), to, d.getDescription(), false));
        }
      }
      for (String text : ClassFileText.of(bytes(c))) {
        Matcher m = CLASS_NAME.matcher(text);
        while (m.find()) {
          String named = m.group();
          String to = named.substring(0, named.lastIndexOf('.'));
          graph.add(new Arrow(c.getPackageName(), to, c.getName() + " names " + named + " in a string", true));
        }
      }
    }
    return graph;
  }

  /**
   * Each arrow made by a string that closes a cycle: the arrow, then the way back from its
   * target to its source, by imports and strings alike.
   */
  List<List<Arrow>> cyclesThroughStrings() {
    List<List<Arrow>> cycles = new ArrayList<>();
    for (Arrow a : byString) {
      List<Arrow> back = path(a.to(), a.from());
      if (back != null) {
        List<Arrow> cycle = new ArrayList<>();
        cycle.add(a);
        cycle.addAll(back);
        cycles.add(cycle);
      }
    }
    return cycles;
  }

  private void add(Arrow a) {
    if (a.from().equals(a.to())) {
      return;
    }
    arrows.computeIfAbsent(a.from(), k -> new LinkedHashMap<>()).putIfAbsent(a.to(), a);
    if (a.byString()) {
      byString.add(a);
    }
  }

  /** The shortest way from one package to another, or null where there is none. */
  private List<Arrow> path(String from, String to) {
    Map<String, Arrow> reachedBy = new HashMap<>();
    Deque<String> queue = new ArrayDeque<>(List.of(from));
    reachedBy.put(from, null);
    while (!queue.isEmpty()) {
      String p = queue.poll();
      if (p.equals(to)) {
        List<Arrow> way = new ArrayList<>();
        for (Arrow a = reachedBy.get(p); a != null; a = reachedBy.get(a.from())) {
          way.add(0, a);
        }
        return way;
      }
      for (Arrow a : arrows.getOrDefault(p, Map.of()).values()) {
        if (!reachedBy.containsKey(a.to())) {
          reachedBy.put(a.to(), a);
          queue.add(a.to());
        }
      }
    }
    return null;
  }

  private static byte[] bytes(JavaClass c) {
    var source = c.getSource().orElseThrow(() -> new IllegalStateException("no class file for " + c.getName()));
    try (InputStream in = source.getUri().toURL().openStream()) {
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + source.getUri(), e);
    }
  }
}
