package io.gpudirect.doctor;

/**
 * One result of {@code gpudirect doctor}.
 *
 * @param check short name ({@code rdma-devices}, {@code memlock}, ...)
 * @param status OK, WARN, FAIL or SKIP
 * @param summary what was found, in one line
 * @param fix the command that fixes it, or empty
 */
public record Finding(String check, Status status, String summary, String fix) {
  /** How a finding counts. Only FAIL makes {@code doctor} exit non-zero. */
  public enum Status {
    /** Present and as recommended. */
    OK,
    /** Works, but slower than it could, or a fallback will be used: worth fixing. */
    WARN,
    /** Missing or broken, and required (by {@code --require}): the configured mode cannot run. */
    FAIL,
    /** Not present and not required, or not applicable on this host. */
    SKIP
  }

  static Finding ok(String check, String summary) {
    return new Finding(check, Status.OK, summary, "");
  }

  static Finding skip(String check, String summary) {
    return new Finding(check, Status.SKIP, summary, "");
  }

  static Finding warn(String check, String summary, String fix) {
    return new Finding(check, Status.WARN, summary, fix);
  }

  static Finding fail(String check, String summary, String fix) {
    return new Finding(check, Status.FAIL, summary, fix);
  }

  /** FAIL when required, else {@code otherwise} (WARN or SKIP). */
  static Finding missing(boolean required, Status otherwise, String check, String summary, String fix) {
    return new Finding(check, required ? Status.FAIL : otherwise, summary, fix);
  }
}
