package io.gpudirect.it;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.Logger;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;

/**
 * The WARN and louder lines one logger writes while this is open, through Spark's own logging
 * (log4j 2 behind slf4j): what a user sees in the driver's log.
 */
final class LogCapture extends AbstractAppender implements AutoCloseable {
  private final Logger logger;
  private final List<String> lines = new CopyOnWriteArrayList<>();

  private LogCapture(Class<?> source) {
    super("capture-" + source.getSimpleName(), null, null, true, Property.EMPTY_ARRAY);
    this.logger = (Logger) LogManager.getLogger(source);
  }

  static LogCapture of(Class<?> source) {
    LogCapture c = new LogCapture(source);
    c.start();
    c.logger.addAppender(c);
    return c;
  }

  @Override
  public void append(LogEvent event) {
    if (event.getLevel().isMoreSpecificThan(Level.WARN)) {
      lines.add(event.getMessage().getFormattedMessage());
    }
  }

  List<String> warnings() {
    return List.copyOf(lines);
  }

  @Override
  public void close() {
    logger.removeAppender(this);
    stop();
  }
}
