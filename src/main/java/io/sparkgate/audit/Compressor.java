package io.sparkgate.audit;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compresses rotated audit files on a thread of its own. Compressing 100 MB took the writer seconds, during
 * which records piled up in the queue (and were dropped, or calls refused with audit.required, once it was
 * full); a rotation is a rename, and the compression waits here instead.
 */
final class Compressor {
  private static final Logger log = LoggerFactory.getLogger(Compressor.class);

  private final ExecutorService executor =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "sparkgate-gzip");
            t.setDaemon(true);
            return t;
          });

  /** Queues {@code rotated} for compression into {@code <name>.gz}. */
  void compressLater(Path rotated) {
    executor.execute(
        () -> {
          try {
            Path done = AuditFiles.compress(rotated);
            log.info("audit log {} compressed to {}", rotated.getFileName(), done.getFileName());
          } catch (IOException | RuntimeException e) {
            // The records stay in the uncompressed file, which verify reads as well; the next start
            // retries.
            log.error("audit: could not compress {}; it stays uncompressed", rotated, e);
          }
        });
  }

  /** Finishes the queued compressions, waiting up to two minutes; what is left is done at the next start. */
  void close() {
    executor.shutdown();
    try {
      if (!executor.awaitTermination(2, TimeUnit.MINUTES)) {
        log.warn(
            "audit: rotated files still uncompressed at stop are compressed at the next start");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
