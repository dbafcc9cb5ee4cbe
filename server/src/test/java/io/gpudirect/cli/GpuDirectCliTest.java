package io.gpudirect.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line's own surface: what --help lists, and demo and bench where their module is absent. */
class GpuDirectCliTest {
  @Test
  void helpListsEveryCommandDemoAndBenchIncluded() {
    String usage = GpuDirectCli.commandLine().getUsageMessage();
    for (String command : new String[] {"demo", "server", "ls", "cat", "doctor", "bench"}) {
      assertTrue(usage.contains("\n  " + command + " "), command + " in:\n" + usage);
    }
  }

  @Test
  void demoAndBenchWithoutTheBenchmarksModuleSayHowToRunThem() {
    for (String command : new String[] {"demo", "bench"}) {
      StringWriter err = new StringWriter();
      int code = GpuDirectCli.commandLine().setErr(new PrintWriter(err)).execute(command);
      assertEquals(1, code);
      assertTrue(err.toString().contains("bin/gpudirect " + command), err.toString());
    }
  }

  /** A misspelt option gets the nearest real one, as git does, not every option of the command. */
  @Test
  void aMisspeltOptionIsAnsweredWithTheNearestOneInAFewLines() {
    for (String[] typo : new String[][] {{"server", "--prot", "7346"}, {"ls", "--secret-fle", "x", "gpudirect://h:1/"},
        {"cat", "--buffersize", "8m", "gpudirect://h:1/f"}}) {
      StringWriter err = new StringWriter();
      int code = GpuDirectCli.commandLine().setErr(new PrintWriter(err)).execute(typo);
      assertEquals(2, code, err.toString());
      String said = err.toString();
      String nearest = switch (typo[0]) {
        case "server" -> "--port";
        case "ls" -> "--secret-file";
        default -> "--buffer-size";
      };
      assertTrue(said.contains("Unknown option: '" + typo[1] + "'") && said.contains("Did you mean " + nearest + "?")
          && said.contains("gpudirect " + typo[0] + " --help"), said);
      assertTrue(said.lines().count() <= 4, "a few lines, not the whole usage:\n" + said);
    }
  }

  /** --max-entries bounds a listing: ls has it, cat (one file) does not. */
  @Test
  void eachCommandsHelpListsItsOwnOptions() {
    String ls = GpuDirectCli.commandLine().getSubcommands().get("ls").getUsageMessage();
    String cat = GpuDirectCli.commandLine().getSubcommands().get("cat").getUsageMessage();
    assertTrue(ls.contains("--max-entries"), ls);
    assertFalse(cat.contains("--max-entries"), cat);
  }

  /** A secret file that is not there, or is empty, is named with what to do. */
  @Test
  void aMissingOrEmptySecretFileIsNamedWithTheFix(@TempDir Path dir) throws Exception {
    Path missing = dir.resolve("nonexistent");
    Path empty = Files.createFile(dir.resolve("empty"));
    for (Path file : new Path[] {missing, empty}) {
      StringWriter err = new StringWriter();
      int code = GpuDirectCli.commandLine().setErr(new PrintWriter(err))
          .execute("ls", "--secret-file", file.toString(), "gpudirect://127.0.0.1:1/");
      assertEquals(1, code, err.toString());
      String said = err.toString();
      assertTrue(said.contains(file.toString()) && !said.contains("Exception"), said);
      assertTrue(said.contains(file == missing ? "does not exist" : "is empty"), said);
      assertTrue(said.contains("the secret the server was started with (its --secret-file)"), said);
    }
  }
}
