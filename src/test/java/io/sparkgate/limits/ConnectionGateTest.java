package io.sparkgate.limits;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.sparkgate.config.LimitsConfig;
import io.sparkgate.forward.ConnectionWatch;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The gate as the transport drives it, through {@link ConnectionWatch}: connections admitted up to the limits
 * and released as they close, refusals and unfinished set-ups counted, and abuse read from the frames.
 */
final class ConnectionGateTest {
  private static final InetSocketAddress A = new InetSocketAddress("10.0.0.1", 40000);
  private static final InetSocketAddress B = new InetSocketAddress("10.0.0.2", 40000);

  private static ConnectionGate gate(int max, int perAddress) {
    LimitsConfig d = LimitsConfig.defaults();
    return new ConnectionGate(
        new LimitsConfig(
            max,
            perAddress,
            d.maxCalls(),
            d.maxBufferedBytes(),
            d.maxHeaderBytes(),
            d.maxStreamResets(),
            Duration.ofSeconds(10)));
  }

  @Test
  void limits_inAllAndPerAddress_releasedOnClose() {
    ConnectionGate gate = gate(3, 2);
    ConnectionWatch.Connection a1 = gate.accept(A);
    assertNotNull(gate.accept(A));
    assertNull(gate.accept(A), "a third from one address");
    assertNotNull(gate.accept(B));
    assertNull(gate.accept(B), "a fourth in all");
    assertEquals(3, gate.open());
    assertEquals(1, gate.refused(ConnectionGate.Reason.MAX_CONNECTIONS_PER_ADDRESS));
    assertEquals(1, gate.refused(ConnectionGate.Reason.MAX_CONNECTIONS));

    a1.closed();
    assertEquals(2, gate.open());
    assertNotNull(gate.accept(A), "room again, in all and for A");
  }

  @Test
  void closedBeforeItsSetUpCompleted_countedUnestablished() {
    ConnectionGate gate = gate(10, 10);
    ConnectionWatch.Connection established = gate.accept(A);
    established.established();
    established.closed();
    gate.accept(B).closed();
    assertEquals(1, gate.unestablished());
    assertEquals(0, gate.open());
  }

  @Test
  void abuse_readFromTheFramesTheProxySent() {
    ConnectionGate gate = gate(10, 10);
    ConnectionWatch.Connection c = gate.accept(A);
    c.established();
    c.streamReset(0x7); // REFUSED_STREAM
    c.streamReset(0x8); // CANCEL: no abuse
    c.goAway(0xb, "too_many_pings");
    c.goAway(0x0, "app_requested"); // graceful
    assertEquals(1, gate.abuse().of(Abuse.Kind.STREAMS_REFUSED));
    assertEquals(1, gate.abuse().of(Abuse.Kind.PING_FLOOD));
    long total = 0;
    for (Abuse.Kind k : Abuse.Kind.values()) total += gate.abuse().of(k);
    assertEquals(2, total);
  }
}
