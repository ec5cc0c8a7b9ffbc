package io.sparkgate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.Status;
import io.sparkgate.config.ProxyConfig;
import io.sparkgate.forward.TestMethods;
import io.sparkgate.proto.spark.ArtifactStatusesRequest;
import io.sparkgate.proto.spark.ExecutePlanRequest;
import io.sparkgate.proto.spark.Plan;
import io.sparkgate.proto.spark.Range;
import io.sparkgate.proto.spark.Relation;
import io.sparkgate.proto.spark.UserContext;
import io.sparkgate.testing.Channels;
import io.sparkgate.testing.FakeSparkConnect;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A unary method (here ArtifactStatus) called with no request message, or with two, through a real proxy on
 * real sockets: both get the proxy's INVALID_ARGUMENT naming the method (the backend would answer INTERNAL,
 * and gRPC's own server would reset the stream), and neither reaches the backend.
 */
final class OneRequestTest {
  @TempDir Path dir;

  @Test
  void unaryCall_withZeroOrTwoRequests_refused_secondNeverForwarded() throws Exception {
    FakeSparkConnect backend = new FakeSparkConnect();
    Server backendServer = backend.serve();
    Files.writeString(
        dir.resolve("sparkgate.yaml"),
        String.join(
            "\n",
            "listen: {address: 127.0.0.1, port: 0, plaintext: true}",
            "backend: {address: '127.0.0.1:" + backendServer.getPort() + "'}",
            "auth: {anonymous: true}",
            ""));
    byte[] request =
        ArtifactStatusesRequest.newBuilder()
            .setSessionId("4a3c1f6e-0000-4000-8000-000000000050")
            .build()
            .toByteArray();
    byte[] plan =
        ExecutePlanRequest.newBuilder()
            .setSessionId("4a3c1f6e-0000-4000-8000-000000000050")
            .setUserContext(UserContext.newBuilder().setUserId("anonymous"))
            .setPlan(
                Plan.newBuilder()
                    .setRoot(
                        Relation.newBuilder().setRange(Range.newBuilder().setEnd(3).setStep(1))))
            .build()
            .toByteArray();
    try (Sparkgate proxy = Sparkgate.start(ProxyConfig.load(dir.resolve("sparkgate.yaml")))) {
      ManagedChannel channel = Channels.plaintext(proxy.port()).build();
      try {
        // None: the proxy's own error, naming the method.
        Status none = call(channel, "ArtifactStatus", 0, request);
        assertEquals(Status.Code.INVALID_ARGUMENT, none.getCode(), none.toString());
        assertEquals(
            "ArtifactStatus takes exactly one request message; this call sent no",
            none.getDescription());
        // Two: the same, and the backend sees neither (the first is held until the half-close).
        int before = backend.received.size();
        Status two = call(channel, "ArtifactStatus", 2, request);
        assertEquals(Status.Code.INVALID_ARGUMENT, two.getCode(), two.toString());
        assertEquals(
            "ArtifactStatus takes exactly one request message; this call sent more than one",
            two.getDescription());
        // A server-streaming method (ExecutePlan) is held to one request the same way.
        Status twoPlans = call(channel, "ExecutePlan", 2, plan);
        assertEquals(Status.Code.INVALID_ARGUMENT, twoPlans.getCode(), twoPlans.toString());
        assertEquals(
            "ExecutePlan takes exactly one request message; this call sent more than one",
            twoPlans.getDescription());
        assertEquals(
            before, backend.received.size(), "a request of a refused call reached the backend");
        // And one request is still answered.
        CompletableFuture<Status> ok = new CompletableFuture<>();
        ClientCall<byte[], byte[]> call =
            channel.newCall(TestMethods.get("ArtifactStatus"), CallOptions.DEFAULT);
        call.start(
            new ClientCall.Listener<>() {
              @Override
              public void onClose(Status status, Metadata trailers) {
                ok.complete(status);
              }
            },
            new Metadata());
        call.request(1);
        call.sendMessage(request);
        call.halfClose();
        assertEquals(Status.Code.OK, ok.get(30, TimeUnit.SECONDS).getCode());
      } finally {
        channel.shutdownNow();
      }
    } finally {
      backendServer.shutdownNow();
    }
  }

  private static Status call(ManagedChannel channel, String method, int messages, byte[] request)
      throws Exception {
    CompletableFuture<Status> closed = new CompletableFuture<>();
    ClientCall<byte[], byte[]> call = channel.newCall(TestMethods.get(method), CallOptions.DEFAULT);
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onClose(Status status, Metadata trailers) {
            closed.complete(status);
          }
        },
        new Metadata());
    call.request(2);
    for (int i = 0; i < messages; i++) {
      call.sendMessage(request);
    }
    call.halfClose();
    return closed.get(30, TimeUnit.SECONDS);
  }
}
