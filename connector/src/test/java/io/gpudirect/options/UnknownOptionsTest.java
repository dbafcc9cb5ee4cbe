package io.gpudirect.options;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Which keys are warned about, and what the warning suggests; OptionMistakesIT reads the log. */
class UnknownOptionsTest {
  @Test
  void typosAreNamedWithTheClosestOption() {
    assertEquals(List.of("Unknown gpudirect option 'tranport' is ignored; did you mean 'transport'?",
        "Unknown gpudirect option 'tls.trustStor' is ignored; did you mean 'tls.trustStore'?",
        "Unknown gpudirect option 'requestTimout' is ignored; did you mean 'requestTimeout'?"),
        UnknownOptions.checkReadOptions(List.of("tranport", "Transport", "tls.trustStor", "requestTimout")));
  }

  @Test
  void sparksOwnKeysAndHadoopSettingsAreNotWarnedAbout() {
    assertEquals(List.of(), UnknownOptions.checkReadOptions(List.of("path", "paths", "PATH",
        "parquet.block.size", "fs.s3a.endpoint", "mapreduce.input.fileinputformat.split.minsize")));
  }

  @Test
  void aSessionKeyGivenAsAReadOptionIsToldItsReadOptionName() {
    assertEquals(List.of("read option 'spark.gpudirect.streams' is a session conf key; as a read option it"
        + " is 'streams' (ignored as given)"), UnknownOptions.checkReadOptions(List.of("spark.gpudirect.streams")));
  }

  @Test
  void sessionKeysAreCheckedUnderTheirPrefixOnly() {
    assertEquals(List.of("Unknown gpudirect setting 'spark.gpudirect.strems' is ignored; did you mean"
        + " 'spark.gpudirect.streams'?"), UnknownOptions.checkSessionKeys(List.of("spark.gpudirect.strems",
            "spark.gpudirect.streams", "spark.sql.shuffle.partitions")));
  }

  @Test
  void executorSettingsAreKnownInTheConfAndRedirectedAsReadOptions() {
    assertEquals(List.of(), UnknownOptions.checkSessionKeys(List.of("spark.gpudirect.pinnedChunks",
        "spark.gpudirect.DEVICEMEMORYLIMIT", "spark.gpudirect.prefetchFraction",
        "spark.gpudirect.hostCopyPinnedPoolBytes", "spark.gpudirect.arrowMemoryLimit")));
    assertEquals(List.of("read option 'pinnedchunks' is an executor setting, which one read cannot change: give it"
        + " as spark.gpudirect.pinnedChunks in the Spark conf (ignored as given)"),
        UnknownOptions.checkReadOptions(List.of("pinnedchunks")));
    // A dotted key far from every option passes as a Hadoop setting; this one must not.
    assertEquals(List.of("read option 'spark.gpudirect.pinnedChunks' is an executor setting, which one read cannot"
        + " change: give it as spark.gpudirect.pinnedChunks in the Spark conf (ignored as given)"),
        UnknownOptions.checkReadOptions(List.of("spark.gpudirect.pinnedChunks")));
  }

  @Test
  void aNameFarFromEveryOptionListsThemAll() {
    String w = UnknownOptions.checkReadOptions(List.of("compression")).get(0);
    assertEquals(true, w.startsWith("Unknown gpudirect option 'compression' is ignored; the closest option is '")
        && w.contains("the options are servers, format, pathGlobFilter, basePath, transport"), w);
  }

  @Test
  void editDistance() {
    assertEquals(1, UnknownOptions.distance("strems", "streams"));
    assertEquals(1, UnknownOptions.distance("tranport", "transport"));
    assertEquals(3, UnknownOptions.distance("kitten", "sitting"));
    assertEquals(0, UnknownOptions.distance("", ""));
  }
}
