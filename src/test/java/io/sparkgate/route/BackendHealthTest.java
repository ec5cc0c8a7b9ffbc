package io.sparkgate.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.sparkgate.config.HealthConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A backend seen down and up by probes, over a channel that answers each probe with the status the test
 * sets; and the reconnect requests that keep every connection to it in step with what the probes saw.
 */
class BackendHealthTest {
  private static final String BACKEND = "10.0.0.1:15002";

  private Status answer = Status.UNIMPLEMENTED;
  private final List<String> reconnects = new ArrayList<>();
  private final BackendHealth health =
      new BackendHealth(
          List.of(BACKEND),
          address -> new Answering(),
          reconnects::add,
          HealthConfig.defaults(),
          () -> 0L);

  @Test
  void upBackend_isNotAskedToReconnect() {
    health.probeAll();
    assertEquals(Map.of(BACKEND, BackendHealth.State.UP), health.states());
    assertEquals(List.of(), reconnects);
  }

  @Test
  void downAfterFailedProbesInARow_thenEveryProbeReconnectsFirst() {
    answer = Status.UNAVAILABLE;
    for (int i = 1; i < BackendHealth.FAILED_PROBES_TO_DOWN; i++) {
      health.probeAll();
      assertTrue(health.usable(BACKEND), "down after " + i + " failed probes");
    }
    health.probeAll();
    assertFalse(health.usable(BACKEND));
    assertEquals(List.of(), reconnects, "nothing to reconnect before the backend was down");

    health.probeAll();
    health.probeAll();
    assertEquals(List.of(BACKEND, BACKEND), reconnects);
  }

  @Test
  void backUp_everyConnectionReconnectsAtOnce() {
    health.failed(BACKEND, "a call could not reach it");
    answer = Status.UNIMPLEMENTED; // the probe method's answer from a live server
    health.probeAll();
    assertTrue(health.usable(BACKEND));
    // Once before the probe (it was down), once on seeing it up: the other connections must not
    // wait.
    assertEquals(List.of(BACKEND, BACKEND), reconnects);
    health.probeAll();
    assertEquals(2, reconnects.size(), "an up backend is left alone");
  }

  /** Answers every call at once, when it half-closes, with {@link #answer}. */
  private final class Answering extends Channel {
    @Override
    public <Q, A> ClientCall<Q, A> newCall(MethodDescriptor<Q, A> method, CallOptions options) {
      return new ClientCall<>() {
        private Listener<A> listener;

        @Override
        public void start(Listener<A> listener, Metadata headers) {
          this.listener = listener;
        }

        @Override
        public void request(int n) {}

        @Override
        public void cancel(String message, Throwable cause) {}

        @Override
        public void halfClose() {
          listener.onClose(answer, new Metadata());
        }

        @Override
        public void sendMessage(Q message) {}
      };
    }

    @Override
    public String authority() {
      return BACKEND;
    }
  }
}
