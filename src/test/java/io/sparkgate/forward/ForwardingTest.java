package io.sparkgate.forward;

import static io.sparkgate.testing.WireBytes.utf8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Deadline;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ClientCalls;
import io.sparkgate.testing.Await;
import io.sparkgate.testing.FakeSparkConnect;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The forwarding path against an in-process backend that records what it receives. */
final class ForwardingTest {
  private static final Map<String, MethodDescriptor<byte[], byte[]>> METHODS = TestMethods.ALL;
  private static final MethodDescriptor<byte[], byte[]> EXECUTE = method("ExecutePlan");
  private static final MethodDescriptor<byte[], byte[]> CONFIG = method("Config");
  private static final MethodDescriptor<byte[], byte[]> ADD_ARTIFACTS = method("AddArtifacts");
  private static final Metadata.Key<String> CUSTOM =
      Metadata.Key.of("x-custom", Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> AUTHENTICATION =
      Metadata.Key.of("authentication", Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<byte[]> DETAILS =
      Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER);

  private final List<AutoCloseable> closers = new ArrayList<>();
  private final FakeSparkConnect backend = new FakeSparkConnect();
  private CallHook.Factory hooks = CallHook.Factory.PASS_THROUGH;

  @AfterEach
  void tearDown() throws Exception {
    for (AutoCloseable c : closers) {
      c.close();
    }
  }

  private static MethodDescriptor<byte[], byte[]> method(String name) {
    return METHODS.get(SparkConnectMethods.SERVICE + "/" + name);
  }

  /** Starts backend and proxy, returns a client channel to the proxy. */
  private ManagedChannel proxy(String backendToken) throws Exception {
    return proxy(backendToken, null);
  }

  /** As above, the proxy's callbacks on {@code proxyExecutor} (null: gRPC's shared pool). */
  private ManagedChannel proxy(String backendToken, Executor proxyExecutor) throws Exception {
    String backendName = InProcessServerBuilder.generateName();
    Server backendServer =
        InProcessServerBuilder.forName(backendName)
            .fallbackHandlerRegistry(backend)
            .directExecutor()
            .build()
            .start();
    ManagedChannel backendChannel =
        InProcessChannelBuilder.forName(backendName).directExecutor().build();
    String proxyName = InProcessServerBuilder.generateName();
    InProcessServerBuilder proxyBuilder =
        InProcessServerBuilder.forName(proxyName)
            .fallbackHandlerRegistry(new ProxyRegistry(backendChannel, backendToken, hooks));
    if (proxyExecutor != null) {
      proxyBuilder.executor(proxyExecutor);
    }
    Server proxyServer = proxyBuilder.build().start();
    ManagedChannel client = InProcessChannelBuilder.forName(proxyName).build();
    closers.add(() -> client.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    closers.add(() -> proxyServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    closers.add(() -> backendChannel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    closers.add(() -> backendServer.shutdownNow().awaitTermination(5, TimeUnit.SECONDS));
    return client;
  }

  @Test
  void unary_bytesPassUnchangedBothWays() throws Exception {
    byte[] request = {0, 1, 2, (byte) 0xff, 0x0a, 0x7f};
    backend.reply = msg -> new byte[] {9, 8, 7, msg[3]};
    ManagedChannel client = proxy(null);

    byte[] response = ClientCalls.blockingUnaryCall(client, CONFIG, CallOptions.DEFAULT, request);

    assertArrayEquals(new byte[] {9, 8, 7, (byte) 0xff}, response);
    assertArrayEquals(request, backend.received.take());
    assertEquals(CONFIG.getFullMethodName(), backend.lastMethod.get());
  }

  @Test
  void headers_credentialsAndUnlistedDropped_backendTokenAdded() throws Exception {
    ManagedChannel client = proxy("backend-secret");
    Metadata headers = new Metadata();
    headers.put(CUSTOM, "kept");
    headers.put(AUTHORIZATION, "Bearer client-token");
    headers.put(AUTHENTICATION, "Bearer client-token");

    ClientCalls.blockingUnaryCall(
        io.grpc.ClientInterceptors.intercept(
            client, io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(headers)),
        CONFIG,
        CallOptions.DEFAULT,
        utf8("x"));

    Metadata seen = backend.lastHeaders.get();
    assertNull(seen.get(CUSTOM)); // not in listen.forward_headers (none here)
    assertEquals("Bearer backend-secret", seen.get(AUTHORIZATION));
    assertNull(seen.get(AUTHENTICATION));
  }

  @Test
  void headers_noBackendToken_noAuthorizationForwarded() throws Exception {
    ManagedChannel client = proxy(null);
    Metadata headers = new Metadata();
    headers.put(AUTHORIZATION, "Bearer client-token");
    ClientCalls.blockingUnaryCall(
        io.grpc.ClientInterceptors.intercept(
            client, io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(headers)),
        CONFIG,
        CallOptions.DEFAULT,
        utf8("x"));
    assertNull(backend.lastHeaders.get().get(AUTHORIZATION));
  }

  @Test
  void error_statusDescriptionAndDetailsPassThrough() throws Exception {
    byte[] details = {1, 2, 3, 4, 5};
    backend.failWith = Status.INVALID_ARGUMENT.withDescription("[TABLE_OR_VIEW_NOT_FOUND] nope");
    backend.failTrailers.put(DETAILS, details);
    backend.failTrailers.put(CUSTOM, "trailer");
    ManagedChannel client = proxy(null);

    StatusRuntimeException e =
        assertThrows(
            StatusRuntimeException.class,
            () -> ClientCalls.blockingUnaryCall(client, CONFIG, CallOptions.DEFAULT, utf8("x")));

    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
    assertEquals("[TABLE_OR_VIEW_NOT_FOUND] nope", e.getStatus().getDescription());
    assertArrayEquals(details, e.getTrailers().get(DETAILS));
    assertEquals("trailer", e.getTrailers().get(CUSTOM));
  }

  @Test
  void serverStreaming_allMessagesInOrder() throws Exception {
    backend.streamCount = 500;
    ManagedChannel client = proxy(null);

    Iterator<byte[]> it =
        ClientCalls.blockingServerStreamingCall(client, EXECUTE, CallOptions.DEFAULT, utf8("plan"));
    int n = 0;
    while (it.hasNext()) {
      assertEquals("batch-" + n, new String(it.next(), StandardCharsets.UTF_8));
      n++;
    }
    assertEquals(500, n);
  }

  @Test
  void clientStreaming_everyMessageForwarded() throws Exception {
    ManagedChannel client = proxy(null);
    CompletableFuture<byte[]> result = new CompletableFuture<>();
    ClientCall<byte[], byte[]> call = client.newCall(ADD_ARTIFACTS, CallOptions.DEFAULT);
    call.start(new CollectingListener(result), new Metadata());
    call.request(1);
    for (int i = 0; i < 20; i++) {
      call.sendMessage(utf8("chunk-" + i));
    }
    call.halfClose();

    assertEquals(
        "received 20", new String(result.get(30, TimeUnit.SECONDS), StandardCharsets.UTF_8));
    for (int i = 0; i < 20; i++) {
      assertEquals("chunk-" + i, new String(backend.received.take(), StandardCharsets.UTF_8));
    }
  }

  @Test
  void unknownMethod_unimplemented_backendNotContacted() throws Exception {
    ManagedChannel client = proxy(null);
    MethodDescriptor<byte[], byte[]> unknown =
        EXECUTE.toBuilder()
            .setFullMethodName("spark.connect.SparkConnectService/BatchExecutePlan")
            .build();
    MethodDescriptor<byte[], byte[]> otherService =
        CONFIG.toBuilder()
            .setFullMethodName("grpc.reflection.v1.ServerReflection/ServerReflectionInfo")
            .build();

    StatusRuntimeException e1 =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                ClientCalls.blockingServerStreamingCall(
                        client, unknown, CallOptions.DEFAULT, utf8("x"))
                    .hasNext());
    StatusRuntimeException e2 =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                ClientCalls.blockingUnaryCall(
                    client, otherService, CallOptions.DEFAULT, utf8("x")));

    assertEquals(Status.Code.UNIMPLEMENTED, e1.getStatus().getCode());
    assertEquals(Status.Code.UNIMPLEMENTED, e2.getStatus().getCode());
    assertNull(backend.lastMethod.get());
  }

  @Test
  void deadline_reachesBackend() throws Exception {
    ManagedChannel client = proxy(null);
    ClientCalls.blockingUnaryCall(
        client,
        CONFIG,
        CallOptions.DEFAULT.withDeadline(Deadline.after(30, TimeUnit.SECONDS)),
        utf8("x"));
    Deadline seen = backend.lastDeadline.get();
    assertNotNull(seen, "backend saw no deadline");
    assertTrue(
        seen.timeRemaining(TimeUnit.SECONDS) > 20 && seen.timeRemaining(TimeUnit.SECONDS) <= 30);
  }

  @Test
  void clientCancel_cancelsBackendCall() throws Exception {
    backend.streamCount = Integer.MAX_VALUE;
    ManagedChannel client = proxy(null);
    ClientCall<byte[], byte[]> call = client.newCall(EXECUTE, CallOptions.DEFAULT);
    CompletableFuture<byte[]> ignored = new CompletableFuture<>();
    call.start(new CollectingListener(ignored), new Metadata());
    call.sendMessage(utf8("plan"));
    call.halfClose();
    call.request(3);
    assertTrue(backend.streamStarted.await(30, TimeUnit.SECONDS));

    call.cancel("user pressed Ctrl-C", null);

    assertTrue(
        backend.streamCancelled.await(30, TimeUnit.SECONDS), "backend call was not cancelled");
  }

  @Test
  void slowReader_backendHeldBack_proxyBuffersAboutOneMessage() throws Exception {
    backend.streamCount = 10_000;
    // The proxy's callbacks on one thread of the test's; the backend and its channel run inline on
    // whichever thread drives them. Once that thread has nothing queued, nothing more moves until
    // the client reads.
    ThreadPoolExecutor proxyThread =
        new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
    ManagedChannel client = proxy(null, proxyThread);
    closers.add(proxyThread::shutdownNow); // after the proxy's server has stopped
    ClientCall<byte[], byte[]> call = client.newCall(EXECUTE, CallOptions.DEFAULT);
    BlockingQueue<byte[]> got = new LinkedBlockingQueue<>();
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onMessage(byte[] message) {
            got.add(message);
          }
        },
        new Metadata());
    call.sendMessage(utf8("plan"));
    call.halfClose();
    call.request(1); // a reader that takes one message and then stops reading

    assertNotNull(got.poll(30, TimeUnit.SECONDS));
    // Whatever a misbehaving proxy would pull from the backend, it has pulled once its thread is
    // idle.
    Await.until(
        "the proxy's thread to have nothing queued",
        () -> proxyThread.submit(() -> proxyThread.getQueue().isEmpty()).get(30, TimeUnit.SECONDS));
    int sent = backend.sent.get();
    assertTrue(
        sent <= 4, "backend was allowed to send " + sent + " messages to a reader that took 1");

    call.request(100);
    for (int i = 0; i < 100; i++) {
      assertNotNull(got.poll(30, TimeUnit.SECONDS), "message " + i);
    }
    assertTrue(backend.sent.get() <= 105, "backend sent " + backend.sent.get());
    call.cancel("done", null);
  }

  /** State a hook learns from the backend's answer is in place before the client can act on the answer. */
  @Test
  void onClosing_runsBeforeTheClientSeesTheStatus() throws Exception {
    java.util.concurrent.atomic.AtomicReference<Status> closing =
        new java.util.concurrent.atomic.AtomicReference<>();
    hooks =
        (method, headers, transport) ->
            new CallHook() {
              @Override
              public void onClosing(Status status) {
                try {
                  Thread.sleep(200); // a client told first would have returned meanwhile
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
                closing.set(status);
              }
            };
    ManagedChannel client = proxy(null);

    ClientCalls.blockingUnaryCall(client, CONFIG, CallOptions.DEFAULT, utf8("x"));
    assertEquals(Status.Code.OK, closing.get().getCode());

    backend.failWith = Status.NOT_FOUND.withDescription("[SCHEMA_NOT_FOUND] no_such_db");
    closing.set(null);
    assertThrows(
        StatusRuntimeException.class,
        () -> ClientCalls.blockingUnaryCall(client, CONFIG, CallOptions.DEFAULT, utf8("x")));
    assertEquals(Status.Code.NOT_FOUND, closing.get().getCode());
  }

  @Test
  void hookRefusal_clientGetsStatusAndTrailers_backendNeverSeesCall() throws Exception {
    Metadata trailers = new Metadata();
    trailers.put(DETAILS, new byte[] {42});
    hooks =
        (method, headers, transport) ->
            new CallHook() {
              @Override
              public byte[] onRequest(byte[] message) throws StatusException {
                throw Status.PERMISSION_DENIED
                    .withDescription("no UDFs here")
                    .asException(trailers);
              }
            };
    ManagedChannel client = proxy(null);

    StatusRuntimeException e =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                ClientCalls.blockingServerStreamingCall(
                        client, EXECUTE, CallOptions.DEFAULT, utf8("udf"))
                    .hasNext());

    assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode());
    assertEquals("no UDFs here", e.getStatus().getDescription());
    assertArrayEquals(new byte[] {42}, e.getTrailers().get(DETAILS));
    assertNull(backend.lastMethod.get(), "a refused call reached the backend");
  }

  @Test
  void hookFailure_failsClosed() throws Exception {
    hooks =
        (method, headers, transport) ->
            new CallHook() {
              @Override
              public byte[] onRequest(byte[] message) {
                throw new IllegalStateException("bug in inspection");
              }
            };
    ManagedChannel client = proxy(null);

    StatusRuntimeException e =
        assertThrows(
            StatusRuntimeException.class,
            () -> ClientCalls.blockingUnaryCall(client, CONFIG, CallOptions.DEFAULT, utf8("x")));

    assertEquals(Status.Code.INTERNAL, e.getStatus().getCode());
    assertFalse(
        e.getStatus().getDescription().contains("bug in inspection"), "internal detail leaked");
    assertNull(backend.lastMethod.get());
  }

  @Test
  void hookRefusalMidStream_cancelsBackend() throws Exception {
    AtomicInteger seen = new AtomicInteger();
    hooks =
        (method, headers, transport) ->
            new CallHook() {
              @Override
              public byte[] onRequest(byte[] message) throws StatusException {
                if (seen.incrementAndGet() == 3) {
                  throw Status.PERMISSION_DENIED
                      .withDescription("jar upload refused")
                      .asException();
                }
                return message;
              }
            };
    ManagedChannel client = proxy(null);
    CompletableFuture<byte[]> result = new CompletableFuture<>();
    ClientCall<byte[], byte[]> call = client.newCall(ADD_ARTIFACTS, CallOptions.DEFAULT);
    call.start(new CollectingListener(result), new Metadata());
    call.request(1);
    for (int i = 0; i < 5; i++) {
      call.sendMessage(utf8("chunk-" + i));
    }
    call.halfClose();

    Exception e = assertThrows(Exception.class, () -> result.get(5, TimeUnit.SECONDS));
    assertEquals(Status.Code.PERMISSION_DENIED, Status.fromThrowable(e.getCause()).getCode());
    assertTrue(backend.streamCancelled.await(30, TimeUnit.SECONDS), "backend stream not cancelled");
    assertEquals(2, backend.received.size());
  }

  /** Completes a future with the single response, or the failure. */
  private static final class CollectingListener extends ClientCall.Listener<byte[]> {
    private final CompletableFuture<byte[]> result;
    private byte[] last;

    CollectingListener(CompletableFuture<byte[]> result) {
      this.result = result;
    }

    @Override
    public void onMessage(byte[] message) {
      last = message;
    }

    @Override
    public void onClose(Status status, Metadata trailers) {
      if (status.isOk()) {
        result.complete(last);
      } else {
        result.completeExceptionally(status.asException(trailers));
      }
    }
  }
}
