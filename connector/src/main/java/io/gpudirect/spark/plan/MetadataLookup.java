package io.gpudirect.spark.plan;

import java.io.Serializable;
import java.util.Map;
import scala.runtime.AbstractFunction1;

/** A Parquet footer's key-value metadata as the lookup function Spark's rebase rules take. */
public final class MetadataLookup extends AbstractFunction1<String, String> implements Serializable {
  private final Map<String, String> metadata;

  public MetadataLookup(Map<String, String> metadata) {
    this.metadata = metadata;
  }

  @Override
  public String apply(String key) {
    return metadata.get(key);
  }
}
