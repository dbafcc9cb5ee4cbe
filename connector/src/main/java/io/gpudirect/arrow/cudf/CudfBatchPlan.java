package io.gpudirect.arrow.cudf;

import ai.rapids.cudf.DType;
import java.util.List;

/**
 * One record or dictionary batch, checked on the host and ready for the GPU: which slices of
 * the fetched body and of the staged host bytes each cuDF column is made of. Made by
 * {@link CudfBatchPlanner}; turned into cuDF columns by {@link CudfArrowIpcReader}.
 *
 * @param needsBody whether any column reads the IPC body as stored (else only staged bytes)
 * @param staged decompressed and rewritten buffers, {@code stagedLength} bytes of it used
 */
record CudfBatchPlan(long rows, List<Column> columns, boolean needsBody, byte[] staged, int stagedLength) {

  /** A checked byte range of the stored body, or of the staged bytes. */
  record Slice(boolean staged, long offset, long length) {
    static final Slice EMPTY = new Slice(true, 0, 0);
  }

  /** How a column becomes a cuDF column. */
  enum Kind {
    /** Fixed-width values, read as they are. */
    FIXED,
    /** Arrow's bits, unpacked to cuDF's bytes on the GPU. */
    BOOL,
    /** INT32 offsets and characters. */
    STRING,
    /** INT32 offsets and one child: lists, maps, binary (a UINT8 child). */
    LIST,
    /** Children of the same length. */
    STRUCT,
    /** Indices (data, of {@code type}) into dictionary {@code dictionaryId}, checked against its size. */
    DICTIONARY,
    /** Arrow's Null type: no buffers at all, every row null (an INT8 column on the GPU). */
    NULL
  }

  /**
   * One cuDF column to make.
   *
   * @param type the cuDF type; for {@link Kind#DICTIONARY} the type of the indices
   * @param validity null when the column has no nulls
   * @param data null for LIST and STRUCT
   * @param offsets INT32 offsets for STRING and LIST, else null
   */
  record Column(String name, Kind kind, DType type, long rows, long nullCount, Slice validity, Slice data,
      Slice offsets, List<Column> children, long dictionaryId) {}
}
