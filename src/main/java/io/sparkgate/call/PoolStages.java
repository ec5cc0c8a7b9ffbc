package io.sparkgate.call;

import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.Payload;
import java.util.function.Function;

/**
 * The stages that differ by pool (inspect in the pool's sessions, decide by the pool's policy), opened for
 * the pool the route stage chose. The route stage chooses at the call's first request message (a session
 * stays in the pool it was placed in, even when the routes change), so they are opened then, just before
 * that message reaches them.
 */
public final class PoolStages implements Stage {
  private final Function<String, Pipeline> byPool;
  private final boolean shared;

  /**
   * @param byPool the pipeline of each pool's stages; never null for a pool the route stage chooses
   * @param shared whether the pools' stages read a store shared by replicas: a first message, whose pool is
   *     not chosen yet when it is asked whether it may wait, then may
   */
  public PoolStages(Function<String, Pipeline> byPool, boolean shared) {
    this.byPool = byPool;
    this.shared = shared;
  }

  @Override
  public CallHook open(Call call) {
    return new Deferred(call);
  }

  /** Request side first, so {@link #hook} is set on the request thread before responses can arrive. */
  private final class Deferred implements CallHook {
    private final Call call;
    private volatile CallHook hook;

    Deferred(Call call) {
      this.call = call;
    }

    @Override
    public byte[] onRequest(byte[] message) throws StatusException {
      CallHook h = hook;
      if (h == null) {
        Pipeline pipeline = byPool.apply(call.pool());
        if (pipeline == null) {
          throw Status.INTERNAL
              .withDescription("Sparkgate has no stages for this pool")
              .asException();
        }
        h = pipeline.open(call);
        hook = h;
      }
      return h.onRequest(message);
    }

    @Override
    public void onAccepted(byte[] forwarded) {
      CallHook h = hook;
      if (h != null) h.onAccepted(forwarded);
    }

    @Override
    public void onHalfClose() throws StatusException {
      CallHook h = hook;
      if (h != null) h.onHalfClose();
    }

    @Override
    public Payload onResponse(Payload message) {
      CallHook h = hook;
      return h == null ? message : h.onResponse(message);
    }

    @Override
    public void onClosing(Status status) {
      CallHook h = hook;
      if (h != null) h.onClosing(status);
    }

    @Override
    public void onClose(Status status) {
      CallHook h = hook;
      if (h != null) h.onClose(status);
    }

    @Override
    public String backend() {
      CallHook h = hook;
      return h == null ? null : h.backend();
    }

    @Override
    public void toBackend(io.grpc.Metadata headers) {
      CallHook h = hook;
      if (h != null) h.toBackend(headers);
    }

    @Override
    public boolean mayBlock(byte[] message) {
      CallHook h = hook; // null before the first message: the pool is not known yet
      return h == null ? shared : h.mayBlock(message);
    }
  }
}
