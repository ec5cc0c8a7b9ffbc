package io.sparkgate.redis;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** A Lua script Redis runs atomically, sent by its digest once Redis knows it. */
public record Script(String text, String sha) {
  public Script(String text) {
    this(text, sha1(text));
  }

  /** EVALSHA, and EVAL should Redis not know the script (it restarted since it was loaded). */
  public <T> CompletionStage<T> run(
      RedisAsyncCommands<String, String> c, ScriptOutputType type, String[] keys, String... args) {
    CompletionStage<T> known = c.evalsha(sha, type, keys, args);
    return known.exceptionallyCompose(
        e -> noScript(e) ? c.<T>eval(text, type, keys, args) : CompletableFuture.<T>failedStage(e));
  }

  private static boolean noScript(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof RedisNoScriptException) return true;
      if (t.getMessage() != null && t.getMessage().startsWith("NOSCRIPT")) return true;
    }
    return false;
  }

  private static String sha1(String text) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("no SHA-1", e);
    }
  }
}
