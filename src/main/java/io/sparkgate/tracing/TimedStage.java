package io.sparkgate.tracing;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import io.sparkgate.call.Call;
import io.sparkgate.call.Stage;
import io.sparkgate.call.StageTimes;
import io.sparkgate.forward.CallHook;
import io.sparkgate.forward.Payload;

/**
 * A stage whose time on each call goes into the call's {@link StageTimes}, for the span to show: opening it, and
 * each request message and the end of the stream through its hook. Calls whose span does not record (no
 * {@code StageTimes}) pass through it untimed and unwrapped.
 */
final class TimedStage implements Stage {
  private final String name;
  private final Stage stage;

  TimedStage(String name, Stage stage) {
    this.name = name;
    this.stage = stage;
  }

  @Override
  public CallHook open(Call call) throws StatusException {
    StageTimes times = call.stageTimes();
    if (times == null) return stage.open(call);
    long start = System.nanoTime();
    try {
      CallHook hook = stage.open(call);
      return hook == CallHook.PASS_THROUGH ? hook : new Timed(hook, times);
    } finally {
      times.add(name, System.nanoTime() - start);
    }
  }

  /** The stage's hook, its request side timed; everything else passed on as it is. */
  private final class Timed implements CallHook {
    private final CallHook hook;
    private final StageTimes times;

    Timed(CallHook hook, StageTimes times) {
      this.hook = hook;
      this.times = times;
    }

    @Override
    public byte[] onRequest(byte[] message) throws StatusException {
      long start = System.nanoTime();
      try {
        return hook.onRequest(message);
      } finally {
        times.add(name, System.nanoTime() - start);
      }
    }

    @Override
    public void onHalfClose() throws StatusException {
      long start = System.nanoTime();
      try {
        hook.onHalfClose();
      } finally {
        times.add(name, System.nanoTime() - start);
      }
    }

    @Override
    public void onAccepted(byte[] forwarded) {
      hook.onAccepted(forwarded);
    }

    @Override
    public Payload onResponse(Payload message) {
      return hook.onResponse(message);
    }

    @Override
    public void onClosing(Status status) {
      hook.onClosing(status);
    }

    @Override
    public void onClose(Status status) {
      hook.onClose(status);
    }

    @Override
    public String backend() {
      return hook.backend();
    }

    @Override
    public void toBackend(Metadata headers) {
      hook.toBackend(headers);
    }

    @Override
    public boolean mayBlock(byte[] message) {
      return hook.mayBlock(message);
    }
  }
}
