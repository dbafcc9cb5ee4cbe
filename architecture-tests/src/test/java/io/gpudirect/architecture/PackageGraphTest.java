package io.gpudirect.architecture;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The string arrows of {@link PackageGraph}, on fixture packages made for them. */
class PackageGraphTest {
  private static final String FIXTURE = "io.gpudirect.architecture.fixture";

  @Test
  void aClassNamedInAStringClosesACycleWithAnImportBack() {
    List<List<PackageGraph.Arrow>> cycles =
        PackageGraph.of(new ClassFileImporter().importPackages(FIXTURE)).cyclesThroughStrings();

    assertEquals(1, cycles.size(), cycles.toString());
    List<PackageGraph.Arrow> cycle = cycles.get(0);
    assertEquals(2, cycle.size(), cycle.toString());
    assertEquals(new PackageGraph.Arrow(FIXTURE + ".lower", FIXTURE + ".upper",
        FIXTURE + ".lower.Loader names " + FIXTURE + ".upper.Plugin in a string", true), cycle.get(0));
    assertEquals(FIXTURE + ".upper", cycle.get(1).from());
    assertEquals(FIXTURE + ".lower", cycle.get(1).to());
  }
}
