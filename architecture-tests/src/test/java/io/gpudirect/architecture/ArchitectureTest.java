package io.gpudirect.architecture;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static java.util.stream.Collectors.joining;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.Location;
import io.gpudirect.verbs.provider.RdmaProvider;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The rules of docs/architecture.md, checked on the compiled main classes of every module (this
 * module depends on each, so they are on its class path whichever build directory the Spark
 * line builds into). A broken rule fails naming the class, the class it reaches and the line.
 * Each package is placed in its module below; a new one must be placed too.
 */
class ArchitectureTest {
  private static final String GPU_MEMORY = "gpu-memory";
  private static final String RDMA_SHUFFLE = "rdma-shuffle";
  private static final String SERVER = "server";
  private static final String CONNECTOR = "connector";
  private static final String BENCHMARKS = "benchmarks";

  private static final String[] GPU_MEMORY_PACKAGES = {"io.gpudirect", "io.gpudirect.memory..", "io.gpudirect.gpu.."};
  private static final String[] RDMA_SHUFFLE_PACKAGES = {"io.gpudirect.protocol..", "io.gpudirect.tls..",
      "io.gpudirect.verbs..", "io.gpudirect.transport..", "io.gpudirect.client..", "io.gpudirect.server..",
      "io.gpudirect.cudf..", "io.gpudirect.shuffle.."};
  private static final String[] SERVER_PACKAGES = {"io.gpudirect.cli..", "io.gpudirect.doctor..", "io.gpudirect.json.."};
  private static final String[] CONNECTOR_PACKAGES = {"io.gpudirect.spark..", "io.gpudirect.arrow..",
      "io.gpudirect.dataset..", "io.gpudirect.options..", "io.gpudirect.hadoop..", "io.gpudirect.remote.."};
  private static final String[] BENCHMARKS_PACKAGES = {"io.gpudirect.bench..", "io.gpudirect.demo.."};

  private static final JavaClasses MAIN = new ClassFileImporter()
      .withImportOption(ArchitectureTest::isMain)
      .importPackages("io.gpudirect");

  /** Main classes only: not test-classes (in target/ or target/spark4/), not a module's test-jar. */
  private static boolean isMain(Location location) {
    return !location.contains("/test-classes/") && !location.contains("-tests.jar!");
  }

  /** The rules below hold of what was imported: every module's main classes, and no test's. */
  @Test
  void everyModulesMainClassesAndNoTestsAreImported() {
    for (String main : List.of("io.gpudirect.GpuDirectException", "io.gpudirect.server.BlockServer",
        "io.gpudirect.cli.GpuDirectCli", "io.gpudirect.spark.GpuDirectDataSource", "io.gpudirect.bench.BenchCommand")) {
      assertTrue(MAIN.contain(main), main);
    }
    assertFalse(MAIN.contain("io.gpudirect.testing.NoLeaksExtension"));
    assertFalse(MAIN.contain(ArchitectureTest.class));
  }

  @Test
  void modulesReachOnlyTheFloorsBelowThem() {
    layeredArchitecture().consideringOnlyDependenciesInLayers()
        .layer(GPU_MEMORY).definedBy(GPU_MEMORY_PACKAGES)
        .layer(RDMA_SHUFFLE).definedBy(RDMA_SHUFFLE_PACKAGES)
        .layer(SERVER).definedBy(SERVER_PACKAGES)
        .layer(CONNECTOR).definedBy(CONNECTOR_PACKAGES)
        .layer(BENCHMARKS).definedBy(BENCHMARKS_PACKAGES)
        .whereLayer(BENCHMARKS).mayNotBeAccessedByAnyLayer()
        .whereLayer(SERVER).mayOnlyBeAccessedByLayers(BENCHMARKS)
        .whereLayer(CONNECTOR).mayOnlyBeAccessedByLayers(BENCHMARKS)
        .whereLayer(RDMA_SHUFFLE).mayOnlyBeAccessedByLayers(SERVER, CONNECTOR, BENCHMARKS)
        .ensureAllClassesAreContainedInArchitecture()
        .because("the modules are floors: gpu-memory <- rdma-shuffle <- server, connector <- benchmarks;"
            + " every package is placed on one of them here and in docs/architecture.md")
        .check(MAIN);
  }

  @Test
  void serverReachesNeitherClientNorTransport() {
    noClasses().that().resideInAPackage("io.gpudirect.server..")
        .should().dependOnClassesThat().resideInAnyPackage("io.gpudirect.client..", "io.gpudirect.transport..")
        .because("server and client meet only in protocol, tls and verbs")
        .check(MAIN);
  }

  @Test
  void clientAndTransportReachNoServer() {
    noClasses().that().resideInAnyPackage("io.gpudirect.client..", "io.gpudirect.transport..")
        .should().dependOnClassesThat().resideInAPackage("io.gpudirect.server..")
        .because("server and client meet only in protocol, tls and verbs")
        .check(MAIN);
  }

  @Test
  void protocolTlsAndVerbsKnowNeitherSide() {
    noClasses().that().resideInAnyPackage("io.gpudirect.protocol..", "io.gpudirect.tls..", "io.gpudirect.verbs..")
        .should().dependOnClassesThat().resideInAnyPackage("io.gpudirect.client..", "io.gpudirect.transport..",
            "io.gpudirect.server..")
        .because("they are where server and client meet, so they know neither")
        .check(MAIN);
  }

  @Test
  void rdmaServerReachesFilesThroughItsOwnInterface() {
    noClasses().that().resideInAPackage("io.gpudirect.server.rdma..")
        .should().dependOnClassesThat().resideInAPackage("io.gpudirect.server")
        .because("server.rdma reaches files through ServedFiles, which server implements: the arrow runs one way")
        .check(MAIN);
  }

  @Test
  void transportInterfaceImportsOnlyProtocol() {
    classes().that().resideInAPackage("io.gpudirect.transport")
        .should().onlyDependOnClassesThat(resideOutsideOfPackage("io.gpudirect..")
            .or(resideInAnyPackage("io.gpudirect", "io.gpudirect.protocol", "io.gpudirect.transport")))
        .because("the client's transport interface knows only the wire protocol")
        .check(MAIN);
  }

  @Test
  void onlyTheLaunchersStartABlockServer() {
    noClasses().that().resideOutsideOfPackages("io.gpudirect.server..", "io.gpudirect.cli", "io.gpudirect.bench..",
            "io.gpudirect.demo..", "io.gpudirect.shuffle.server")
        .should().dependOnClassesThat().resideInAPackage("io.gpudirect.server..")
        .because("cli (and bench and demo above it) are the packages that use both the server and the client;"
            + " shuffle.server is the one launcher executors run (each serves its own map outputs), so that the"
            + " shuffle manager's Spark adapter starts a server without knowing the server's classes")
        .check(MAIN);
  }

  @Test
  void onlyVerbsDisniImportsDisni() {
    noClasses().that().resideOutsideOfPackage("io.gpudirect.verbs.disni..")
        .should().dependOnClassesThat().resideInAPackage("com.ibm.disni..")
        .because("each verbs provider's library stays inside its own package")
        .check(MAIN);
  }

  @Test
  void onlyVerbsUcxImportsJucx() {
    noClasses().that().resideOutsideOfPackage("io.gpudirect.verbs.ucx..")
        .should().dependOnClassesThat().resideInAPackage("org.openucx..")
        .because("each verbs provider's library stays inside its own package")
        .check(MAIN);
  }

  @Test
  void nothingOutsideVerbsKnowsAProvider() {
    noClasses().that().resideOutsideOfPackage("io.gpudirect.verbs..")
        .should().dependOnClassesThat().resideInAnyPackage("io.gpudirect.verbs.ucx..", "io.gpudirect.verbs.disni..")
        .because("verbs.provider chooses and opens the providers; doctor reads its provider-neutral ProviderReport")
        .check(MAIN);
  }

  @Test
  void onlyTheSidesThatOpenVerbsChooseAProvider() {
    noClasses().that().resideOutsideOfPackages("io.gpudirect.verbs..", "io.gpudirect.client", "io.gpudirect.server")
        .should().dependOnClassesThat().belongToAnyOf(RdmaProvider.class)
        .because("the client's TransportSelector and BlockServer open verbs; above them (options, the CLI)"
            + " the provider is its name, rdma.provider or --rdma-provider, handed down as written")
        .check(MAIN);
  }

  @Test
  void onlyTheGpuPackageImportsJcuda() {
    noClasses().that().resideOutsideOfPackage("io.gpudirect.gpu")
        .should().dependOnClassesThat().resideInAPackage("jcuda..")
        .because("the GPU is reached through io.gpudirect.gpu, so the server package can leave jcuda out")
        .check(MAIN);
  }

  @Test
  void onlyCudaCallsIntoJcuda() {
    noClasses().that().doNotHaveFullyQualifiedName("io.gpudirect.gpu.Cuda")
        .should().dependOnClassesThat().haveFullyQualifiedName("jcuda.runtime.JCuda")
        .orShould().dependOnClassesThat().haveFullyQualifiedName("jcuda.driver.JCudaDriver")
        .because("Cuda makes every CUDA call and checks its error; others hold only jcuda's handle types")
        .check(MAIN);
  }

  @Test
  void sparkAndScalaOnlyInTheSparkPackagesAndTheBenchmarks() {
    noClasses().that().resideOutsideOfPackages("io.gpudirect.spark..", "io.gpudirect.bench..", "io.gpudirect.demo..")
        .should().dependOnClassesThat().resideInAnyPackage("org.apache.spark..", "scala..", "io.gpudirect.spark..")
        .because("the rest loads where Spark is absent: the server package, the CLI, GpuDirect.readTable,"
            + " the gpudirect:// file system outside Spark")
        .check(MAIN);
  }

  @Test
  void benchmarkToolsStayInTheBenchmarks() {
    noClasses().that().resideOutsideOfPackages(BENCHMARKS_PACKAGES)
        .should().dependOnClassesThat().resideInAnyPackage("org.apache.arrow.flight..", "org.openjdk.jmh..", "org.jfree..")
        .because("Flight, JMH and JFreeChart never go into the connector's jars or the server package")
        .check(MAIN);
  }

  @Test
  void noPackageCycles() {
    slices().matching("io.gpudirect.(**)").should().beFreeOfCycles().check(MAIN);
  }

  /**
   * A class named in a string is an arrow ArchUnit cannot see: loaded by name, it still ties
   * the two packages together. Such an arrow must not close a cycle either.
   */
  @Test
  void noPackageCyclesThroughClassNamesInStrings() {
    List<List<PackageGraph.Arrow>> cycles = PackageGraph.of(MAIN).cyclesThroughStrings();
    if (!cycles.isEmpty()) {
      fail("Package cycles closed by a class named in a string (use ServiceLoader, or move the class):\n"
          + cycles.stream().map(c -> c.stream().map(a -> "    " + a).collect(joining("\n"))).collect(joining("\n  and\n")));
    }
  }
}
