package io.sparkgate.audit;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.sparkgate.config.AuditConfig;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tamper-evident audit log: one JSON line per record, each carrying its sequence number and the
 * SHA-256 of the line before it. Request threads only enqueue (never block); one writer thread builds and
 * serializes the records, writes in batches, fsyncs as configured and rotates. {@link #close()} writes
 * everything still queued.
 */
public final class AuditLog implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(AuditLog.class);
  private static final ObjectMapper JSON = new ObjectMapper().disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);
  private static final int BATCH = 4096;
  /**
   * While records keep coming, the writer sleeps this long between batches and no call wakes it. Woken by
   * each record instead, it cost every call a futex wake-up on the request thread, a context switch and a
   * write(2): profiled at 60-70 us of CPU per small call, a quarter of what the full proxy spent on it.
   * Records still reach the file within about this long of the call's end. Longer is not better: lingering
   * one fsync_interval (100 ms) under fsync: batch made each batch's write a burst of page-cache work that
   * doubled full's p99 in a same-run A/B, with no gain at p50 or in CPU (bench/README, thirteenth round).
   */
  static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
  /**
   * The longest linger. At a few hundred calls a second a 5 ms linger gathers two or three records, and each
   * batch then costs a wake-up and a write(2) for those few: profiled in place at about 700 calls/s, the
   * writer's park and write were 40% of its CPU. So the linger doubles while batches stay below
   * {@link #FULL_BATCH} records and halves back once they reach it. Records wait at most this long for the
   * file, half of fsync: batch's default interval, and below the adaptive writer's 100 ms limit.
   */
  static final long MAX_LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
  /** A batch of this many records pays for its wake-up and write; fewer, and the linger grows. */
  static final int FULL_BATCH = 64;
  /** Longest the idle writer sleeps before checking rotation and closing. */
  private static final long IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

  private final AuditConfig config;
  private final Clock clock;
  private final BlockingQueue<Supplier<Map<String, Object>>> queue;
  private final int wakeAt; // a lingering writer is woken once this many records wait
  private final AuditFiles files; // null for stdout
  private final Thread writer;
  /**
   * Compresses rotated files. Compressing 100 MB took the writer seconds, during which records piled up in
   * the queue (and were dropped, or calls refused with audit.required, once it was full); a rotation is
   * now a rename and the compression happens here, as an idle-policy thread ({@link BackgroundPriority}):
   * a rotated file may wait for a quiet moment, a call should not.
   */
  private final ExecutorService compressor;
  /** Idles the writer while it keeps up, where the process may; null: the writer is always a batch thread. */
  private final AdaptiveWriter adaptive;
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicLong written = new AtomicLong();
  private final AtomicLong syncs = new AtomicLong();
  private final AtomicLong batches = new AtomicLong();
  private volatile boolean closing;
  /** The writer is parked waiting for records: the next record unparks it. */
  private volatile boolean idle;

  // Writer thread only.
  private OutputStream out;
  private FileOutputStream fileOut;
  private long fileBytes;
  private Instant fileOpened;
  private long seq;
  private String prev;
  private final ByteArrayOutputStream line = new ByteArrayOutputStream(1024);

  private AuditLog(AuditConfig config, Clock clock) throws IOException {
    this.config = config;
    this.clock = clock;
    this.queue = new ArrayBlockingQueue<>(config.queueSize());
    this.wakeAt = Math.max(1, config.queueSize() / 2);
    this.files = config.file().map(AuditFiles::new).orElse(null);
    resumeChain();
    openOutput();
    this.compressor = files == null ? null : Executors.newSingleThreadExecutor(r -> {
      // Its own short name: Linux shows threads by their first 15 characters, which the writer's name fills.
      Thread t = new Thread(() -> {
        if (!BackgroundPriority.idleCurrentThread()) {
          BackgroundPriority.lowerCurrentThread();
        }
        r.run();
      }, "sparkgate-gzip");
      t.setDaemon(true);
      return t;
    });
    if (files != null) {
      files.interruptedRotations().forEach(this::compressLater); // rotated before a stop or crash
    }
    this.adaptive = AdaptiveWriter.probe(config.queueSize(), queue::size);
    this.writer = new Thread(this::writeLoop, "sparkgate-audit");
    writer.setDaemon(true);
    writer.start();
  }

  /** Opens (or continues) the log the configuration names. */
  public static AuditLog open(AuditConfig config, Clock clock) throws IOException {
    if (!config.enabled()) {
      throw new IllegalArgumentException("audit is disabled in this configuration");
    }
    return new AuditLog(config, clock);
  }

  /**
   * Queues one record (the log takes ownership of the map); false when the queue is full, in which case
   * the record is counted as dropped.
   */
  public boolean write(Map<String, Object> record) {
    return write(() -> record);
  }

  /**
   * Queues a record that the writer thread builds: formatting, hashing and UUIDs then cost the thread that
   * served the call nothing. {@code record} must only read state that no longer changes. False when the
   * queue is full, in which case the record is counted as dropped.
   */
  public boolean write(Supplier<Map<String, Object>> record) {
    if (closing || !queue.offer(record)) {
      dropped.incrementAndGet();
      return false;
    }
    int queued = queue.size(); // a lock: read once per record, for both the writer and its priority
    if (idle || queued >= wakeAt) {
      LockSupport.unpark(writer); // waiting, or lingering while the queue fills up
    }
    if (adaptive != null) {
      adaptive.queued(queued);
    }
    return true;
  }

  /** Records waiting for the writer thread. */
  public int queued() {
    return queue.size();
  }

  /** Whether a new record would currently be accepted; {@code audit.required} refuses calls otherwise. */
  public boolean accepting() {
    return !closing && queue.remainingCapacity() > 0;
  }

  public long dropped() {
    return dropped.get();
  }

  /** Whether the writer idles while it keeps up (this process may move it back from SCHED_IDLE). */
  boolean idlesWhileKeepingUp() {
    return adaptive != null;
  }

  /** How often an idle writer that fell behind was moved back to batch. */
  long writerBoosts() {
    return adaptive == null ? 0 : adaptive.boosts();
  }

  public long written() {
    return written.get();
  }

  /** Batches the writer has written (each a wake-up and a write to the file). */
  public long batches() {
    return batches.get();
  }

  /** How often the writer has forced the file to disk while running (fsync: batch or always). */
  public long syncs() {
    return syncs.get();
  }

  public AuditConfig config() {
    return config;
  }

  /** Writes every queued record, forces it to disk, and stops the writer. */
  @Override
  public void close() {
    closing = true;
    if (adaptive != null) {
      adaptive.hurry();
    }
    LockSupport.unpark(writer);
    try {
      writer.join(TimeUnit.MINUTES.toMillis(2));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (adaptive != null) {
      adaptive.close();
    }
    if (writer.isAlive()) {
      log.error("audit writer did not finish within 2 minutes; {} records may be lost", queue.size());
    }
    if (compressor != null) {
      compressor.shutdown();
      try {
        if (!compressor.awaitTermination(2, TimeUnit.MINUTES)) {
          log.warn("audit: rotated files still uncompressed at stop are compressed at the next start");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void compressLater(Path rotated) {
    compressor.execute(() -> {
      try {
        Path done = AuditFiles.compress(rotated);
        log.info("audit log {} compressed to {}", rotated.getFileName(), done.getFileName());
      } catch (IOException | RuntimeException e) {
        // The records stay in the uncompressed file, which verify reads as well; the next start retries.
        log.error("audit: could not compress {}; it stays uncompressed", rotated, e);
      }
    });
  }

  private void resumeChain() throws IOException {
    seq = 0;
    prev = HashChain.GENESIS;
    if (files == null) {
      return;
    }
    Files.createDirectories(files.current().toAbsolutePath().getParent());
    String last = files.lastLine();
    if (last != null) {
      try {
        seq = JSON.readTree(last).path("seq").asLong();
        prev = HashChain.hash(last);
      } catch (IOException e) {
        throw new IOException("audit.file " + files.current() + ": the last record is not valid JSON, so the "
            + "hash chain cannot continue; run 'sparkgate audit verify' and move the damaged file aside", e);
      }
    }
  }

  private void openOutput() throws IOException {
    if (files == null) {
      out = System.out;
      return;
    }
    boolean existed = Files.exists(files.current());
    fileOut = new FileOutputStream(files.current().toFile(), true);
    out = new BufferedOutputStream(fileOut, 256 * 1024);
    fileBytes = Files.size(files.current());
    fileOpened = existed ? Files.getLastModifiedTime(files.current()).toInstant() : clock.instant();
  }

  private void writeLoop() {
    try {
      writeRecords();
    } finally {
      if (adaptive != null) {
        adaptive.writerStopped();
      }
    }
  }

  private void writeRecords() {
    // Woken every linger while calls come, the writer used to preempt an event loop in the middle of a call.
    // As a batch thread it waits for the next switch instead, with its full share of CPU (two same-run A/Bs:
    // -19 and -28 us p50, +8% and +9% calls/s at saturation). Where the process may move it back, it idles
    // while it keeps up, so that it does not even finish its slice before a woken event loop runs
    // (AdaptiveWriter; bench/README.md, eighteenth round).
    if (adaptive != null) {
      adaptive.writerStarted();
    } else {
      BackgroundPriority.batchCurrentThread();
    }
    List<Supplier<Map<String, Object>>> batch = new ArrayList<>(BATCH);
    // fsync: batch is a group commit: at most one force per interval, for everything written since the last.
    // A proxy serving one call at a time then does not pay one fsync per call (profiled, that cost more CPU
    // than everything else the proxy did for the call); see AuditConfig.DEFAULT_FSYNC_INTERVAL for the length.
    long syncNanos = config.fsyncInterval().toNanos();
    boolean unsynced = false; // written since the last force (fsync: batch)
    long lastSync = System.nanoTime();
    long linger = LINGER_NANOS;
    while (true) {
      try {
        queue.drainTo(batch, BATCH);
        if (adaptive != null) {
          adaptive.drained(batch.size());
        }
        boolean wrote = !batch.isEmpty();
        if (wrote) {
          linger = nextLinger(linger, batch.size());
          batches.incrementAndGet();
          writeBatch(batch);
          batch.clear();
          unsynced = config.fsync() == AuditConfig.Fsync.BATCH;
        }
        if (unsynced && System.nanoTime() - lastSync >= syncNanos) {
          force();
          lastSync = System.nanoTime();
          unsynced = false;
        }
        maybeRotate();
        if (closing && queue.isEmpty()) {
          closeOutput();
          return;
        }
        if (!queue.isEmpty()) {
          continue;
        }
        if (wrote) {
          // Records are coming: let more gather rather than be woken for each (see LINGER_NANOS).
          LockSupport.parkNanos(linger);
        } else {
          long untilSync = unsynced ? Math.max(0, lastSync + syncNanos - System.nanoTime()) : IDLE_NANOS;
          waitForRecords(Math.min(untilSync, IDLE_NANOS));
        }
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (IOException | RuntimeException e) {
        // Keep going: losing the disk for a moment must not lose the rest of the log.
        log.error("audit write failed; {} records in this batch may be lost", batch.size(), e);
        dropped.addAndGet(batch.size());
        batch.clear();
        sleepQuietly();
      }
    }
  }

  /**
   * The linger after a batch of {@code records}: longer while batches are small, so that a moderate call rate
   * costs a wake-up per {@link #FULL_BATCH} records rather than per two or three, and shorter again once they
   * are full (a long linger at a high rate made each write a burst that doubled p99: see LINGER_NANOS).
   */
  static long nextLinger(long linger, int records) {
    return records < FULL_BATCH ? Math.min(MAX_LINGER_NANOS, linger * 2) : Math.max(LINGER_NANOS, linger / 2);
  }

  /**
   * Parks until a record arrives (its writer unparks this thread, see {@link #write}) or the timeout passes.
   * The flag is raised before the queue is checked again, so a record queued in between is never missed.
   */
  private void waitForRecords(long nanos) {
    idle = true;
    if (queue.isEmpty() && !closing) {
      LockSupport.parkNanos(this, nanos);
    }
    idle = false;
  }

  private void writeBatch(List<Supplier<Map<String, Object>>> batch) throws IOException {
    for (Supplier<Map<String, Object>> pending : batch) {
      Map<String, Object> record;
      try {
        record = pending.get();
      } catch (RuntimeException e) {
        // A bug in one record's builder must not cost the rest of the batch.
        log.error("audit record could not be built; dropped", e);
        dropped.incrementAndGet();
        continue;
      }
      // Serialized straight into a reused buffer: building a JSON tree first cost twice as much.
      line.reset();
      try (JsonGenerator json = JSON.getFactory().createGenerator(line)) {
        json.writeStartObject();
        json.writeNumberField("seq", seq + 1);
        json.writeStringField("prev", prev);
        for (Map.Entry<String, Object> e : record.entrySet()) {
          json.writeFieldName(e.getKey());
          writeValue(json, e.getValue());
        }
        json.writeEndObject();
      }
      byte[] bytes = line.toByteArray();
      out.write(bytes);
      out.write('\n');
      seq++;
      prev = HashChain.sha256Hex(bytes);
      fileBytes += bytes.length + 1;
      written.incrementAndGet();
      if (config.fsync() == AuditConfig.Fsync.ALWAYS) {
        force();
      }
      if (files != null && fileBytes >= config.maxFileSize()) {
        rotate(clock.instant());
      }
    }
    out.flush();
  }

  /**
   * Records hold strings, numbers, booleans, and maps and lists of those (a plan summary, a principal's
   * groups); they are written here as ObjectMapper writes them, and anything else goes to ObjectMapper. Each
   * ObjectMapper.writeValue call builds a serializer provider: one per field was a kilobyte of garbage per
   * record, and one per map or list still a sixth of the record's JSON time (profiled in place).
   */
  static void writeValue(JsonGenerator json, Object value) throws IOException {
    if (value instanceof String s) {
      json.writeString(s);
    } else if (value instanceof Long l) {
      json.writeNumber(l);
    } else if (value instanceof Integer i) {
      json.writeNumber(i);
    } else if (value instanceof Boolean b) {
      json.writeBoolean(b);
    } else if (value == null) {
      json.writeNull();
    } else if (value instanceof Map<?, ?> map) {
      json.writeStartObject();
      for (Map.Entry<?, ?> e : map.entrySet()) {
        json.writeFieldName(String.valueOf(e.getKey()));
        writeValue(json, e.getValue());
      }
      json.writeEndObject();
    } else if (value instanceof Collection<?> items) {
      json.writeStartArray();
      for (Object item : items) {
        writeValue(json, item);
      }
      json.writeEndArray();
    } else {
      JSON.writeValue(json, value);
    }
  }

  private void force() throws IOException {
    out.flush();
    if (fileOut != null) {
      fileOut.getChannel().force(false);
      syncs.incrementAndGet();
    }
  }

  private void maybeRotate() throws IOException {
    if (files == null || fileBytes == 0) {
      return;
    }
    Instant now = clock.instant();
    boolean bySize = fileBytes >= config.maxFileSize();
    boolean byAge = Duration.between(fileOpened, now).compareTo(config.rotateInterval()) >= 0;
    if (bySize || byAge) {
      rotate(now);
    }
  }

  private void rotate(Instant now) throws IOException {
    closeOutput();
    Path rotated = files.rotate(now);
    log.info("audit log rotated to {}", rotated);
    openOutput();
    fileOpened = now;
    compressLater(rotated);
  }

  private void closeOutput() throws IOException {
    out.flush();
    if (fileOut != null) {
      fileOut.getChannel().force(true);
      out.close();
    }
  }

  private static void sleepQuietly() {
    try {
      Thread.sleep(100);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** An ordered record under construction, for callers that build one field at a time. */
  public static Map<String, Object> newRecord() {
    return new LinkedHashMap<>(64); // a call's record has about 25 fields: no resizing while it is built
  }
}
