package io.sparkgate.revoke;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One replica's revocations, in memory and, with a state file, written through to it (whole, replaced
 * atomically) so that a restart does not give a cut-off principal their access back.
 */
final class MemoryStore implements RevocationStore {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Optional<Path> file;

  @GuardedBy("this")
  private final Map<String, Revocation> kept = new LinkedHashMap<>();

  @GuardedBy("this")
  private long version;

  /** @throws IllegalArgumentException when the state file exists and is not one this class wrote */
  MemoryStore(Optional<Path> file) {
    this.file = file;
    if (file.isPresent() && Files.exists(file.get())) {
      try {
        JsonNode list = JSON.readTree(file.get().toFile());
        if (list == null || !list.isArray()) throw new IllegalArgumentException("not a JSON list");
        for (JsonNode n : list) {
          Revocation r = Revocation.from(n);
          kept.put(r.id(), r);
        }
      } catch (IOException | IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "auth.revocations.state_file " + file.get() + " cannot be read: " + e.getMessage(), e);
      }
    }
  }

  @Override
  public synchronized Snapshot load() {
    return new Snapshot(version, Map.copyOf(kept));
  }

  @Override
  public synchronized long version() {
    return version;
  }

  @Override
  public synchronized void put(Revocation r) {
    Revocation before = kept.put(r.id(), r);
    try {
      save();
    } catch (UncheckedIOException e) {
      if (before == null) kept.remove(r.id());
      else kept.put(r.id(), before);
      throw e;
    }
    version++;
  }

  @Override
  public synchronized boolean remove(String id) {
    Revocation before = kept.remove(id);
    if (before == null) return false;
    try {
      save();
    } catch (UncheckedIOException e) {
      kept.put(id, before);
      throw e;
    }
    version++;
    return true;
  }

  @GuardedBy("this")
  private void save() {
    if (file.isEmpty()) return;
    List<Map<String, Object>> list = new ArrayList<>();
    kept.values().forEach(r -> list.add(r.toMap()));
    Path target = file.get();
    Path temp = target.resolveSibling(target.getFileName() + ".tmp");
    try {
      Files.write(temp, JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(list));
      Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + target + ": " + e.getMessage(), e);
    }
  }
}
