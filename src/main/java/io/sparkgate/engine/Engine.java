package io.sparkgate.engine;

import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An engine this replica owns: its process, where it listens, its token and its state. A warm engine has no
 * key until it is handed to one.
 */
final class Engine {
  enum State {
    STARTING,
    READY,
    STOPPING
  }

  final String id;
  final String host;
  final String address;
  final int port;
  final String token;
  final Path log;
  final long startedMillis;
  final long startedNanos;

  /** Completes when the engine serves, or exceptionally with the client's readable error. */
  final CompletableFuture<Void> ready = new CompletableFuture<>();

  final AtomicLong lastUsedMillis = new AtomicLong();
  volatile State state = State.STARTING;
  volatile boolean warmingUp; // its port answers; its first query runs
  volatile EngineKey key; // null while warm
  volatile EngineRecord record; // as last written to the directory; null while warm
  volatile ProcessHandle process; // empty for an adopted engine on another host

  Engine(
      String id,
      String host,
      int port,
      String token,
      Path log,
      long startedMillis,
      long startedNanos) {
    this.id = id;
    this.host = host;
    this.port = port;
    this.address = (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    this.token = token;
    this.log = log;
    this.startedMillis = startedMillis;
    this.startedNanos = startedNanos;
    this.lastUsedMillis.set(startedMillis);
  }

  Optional<ProcessHandle> process() {
    return Optional.ofNullable(process);
  }

  boolean alive() {
    ProcessHandle p = process;
    return p == null || p.isAlive();
  }

  long pid() {
    ProcessHandle p = process;
    return p == null ? -1 : p.pid();
  }

  @Override
  public String toString() {
    return "engine " + id + (key == null ? " (warm)" : " (" + key + ")") + " at " + address;
  }
}
