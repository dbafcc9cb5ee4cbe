package io.gpudirect.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The answer to a command line that does not parse: what was wrong, the nearest option or
 * command to a misspelt one, and where the full usage is, in a few lines (the usage itself ran
 * to 60 and buried the error). Nearest by edit distance with transpositions: {@code --prot} is
 * one swap from {@code --port}, which picocli's own suggestions, by shared letter pairs, miss.
 */
final class UsageErrors implements CommandLine.IParameterExceptionHandler {
  /** Further than this, a guess would more often mislead than help. */
  private static final int MAX_DISTANCE = 2;

  @Override
  public int handleParseException(ParameterException e, String[] args) {
    CommandLine cmd = e.getCommandLine();
    PrintWriter err = cmd.getErr();
    String unknown = e instanceof UnmatchedArgumentException u ? firstUnknown(u) : null;
    if (unknown == null) {
      err.println(e.getMessage());
    } else {
      boolean option = unknown.startsWith("-");
      err.println("Unknown " + (option ? "option" : "command") + ": '" + unknown + "'");
      nearest(unknown, option ? optionNames(cmd) : new ArrayList<>(cmd.getSubcommands().keySet()))
          .ifPresent(n -> err.println("Did you mean " + n + "?"));
    }
    err.println("Run '" + cmd.getCommandSpec().qualifiedName() + " --help' for its options.");
    err.flush();
    return cmd.getCommandSpec().exitCodeOnInvalidInput();
  }

  /** The first argument picocli could not place: an option, else a word where a command was due. */
  private static String firstUnknown(UnmatchedArgumentException e) {
    List<String> unmatched = e.getUnmatched();
    return unmatched.stream().filter(a -> a.startsWith("-")).findFirst()
        .orElse(e.getCommandLine().getSubcommands().isEmpty() || unmatched.isEmpty() ? null : unmatched.get(0));
  }

  private static List<String> optionNames(CommandLine cmd) {
    List<String> names = new ArrayList<>();
    for (OptionSpec o : cmd.getCommandSpec().options()) {
      if (!o.hidden()) {
        names.addAll(List.of(o.names()));
      }
    }
    return names;
  }

  /** The candidate nearest to {@code given} (its value after '=' left out), if near enough. */
  static Optional<String> nearest(String given, List<String> candidates) {
    String word = given.contains("=") ? given.substring(0, given.indexOf('=')) : given;
    return candidates.stream()
        .filter(c -> distance(word, c) <= MAX_DISTANCE)
        .min(Comparator.comparingInt(c -> distance(word, c)));
  }

  /** Edits (insert, delete, replace, swap two neighbours) that turn {@code a} into {@code b}. */
  static int distance(String a, String b) {
    int[][] d = new int[a.length() + 1][b.length() + 1];
    for (int i = 0; i <= a.length(); i++) {
      d[i][0] = i;
    }
    for (int j = 0; j <= b.length(); j++) {
      d[0][j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
        if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
          d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.length()][b.length()];
  }
}
