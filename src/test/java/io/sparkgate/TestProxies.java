package io.sparkgate;

import io.sparkgate.config.ProxyConfig;
import io.sparkgate.forward.CallHook;
import java.io.IOException;

/** Test access to {@link Sparkgate#start(ProxyConfig, CallHook.Factory)} from other test packages. */
public final class TestProxies {
  private TestProxies() {}

  /** A proxy with {@code hooks} after authentication in the chain (where the policy engine will sit). */
  public static Sparkgate start(ProxyConfig config, CallHook.Factory hooks) throws IOException {
    return Sparkgate.start(config, hooks);
  }
}
