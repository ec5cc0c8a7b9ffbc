package io.sparkgate.forward;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.Status;
import io.grpc.StatusException;
import java.util.concurrent.Executor;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Joins one client call to one backend call, one message at a time in each direction: a message is read
 * from one side only when the other side can take it, so HTTP/2 flow control reaches from the slowest
 * reader back to the writer and the proxy holds about one message per direction, whatever the result size.
 *
 * <p>Threads: the client call's callbacks (this listener) arrive one at a time on its event loop and run
 * there, or on the worker pool once a message is too large to inspect on a loop ({@link CallLane} keeps them
 * in order either way); the backend's ({@link BackendListener}) run on the backend connection's loop, which
 * is the same thread when the call came in on it. The two sides may run concurrently. Everything either side does to the client-facing
 * {@link ServerCall} happens under {@link #lock}, so a refusal from the request side can never race a
 * response being sent or the backend's own close.
 */
final class ForwardingCall extends ServerCall.Listener<byte[]> {
  private static final Logger log = LoggerFactory.getLogger(ForwardingCall.class);

  /**
   * Larger request messages are handled on the worker pool. Inspection parses SQL at roughly 0.4 us a byte,
   * so this bounds what one message can stall an event loop to a few milliseconds; the plans and SQL of
   * ordinary calls are far smaller and never pay for the thread hop.
   */
  static final int INLINE_REQUEST_BYTES = 8 * 1024;

  /** Response bytes the client-facing call may hold before the next message is read from the backend. */
  static final int RESPONSE_QUEUE_BYTES = 2 * 1024 * 1024;

  private final Function<String, Channel> backends;
  private final MethodDescriptor<byte[], Payload> method;
  private final ServerCall<byte[], Payload> serverCall;
  private final Metadata clientHeaders;
  private final HeaderFilter headers;
  private final CallHook hook;
  private final CallLane lane;
  private final BufferedBytes buffered;

  private final Object lock = new Object();

  /** The client call owes a request(1) as soon as the backend can take a message. */
  @GuardedBy("lock")
  private boolean requestOwed;

  /** The backend call owes a request(1) as soon as the client can take a message. */
  @GuardedBy("lock")
  private boolean responseOwed;

  @GuardedBy("lock")
  private boolean serverClosed;

  /**
   * Bytes counted in {@link #buffered} for the client-facing queue while it is full: gRPC holds the
   * responses sent to a client that does not read (up to {@link #RESPONSE_QUEUE_BYTES} and the message that
   * filled it) until the client takes them or the call ends, and only those calls hold that much.
   */
  @GuardedBy("lock")
  private long queuedForClient;

  /** Started at the first client message, once the hook has let it through. Request-side thread only. */
  private ClientCall<byte[], Payload> clientCall;

  private boolean backendCancelled; // request-side thread only

  /** Request messages seen so far. Request-side thread only. */
  private int requests;

  /**
   * The request of a one-request method, held from its arrival to the client's half-close, as gRPC's own
   * server does: only then is it known to be the only one, and only then is it inspected and answered (a
   * refusal before the half-close makes the transport reset the stream, which some clients retry). Read and
   * written only in the client call's callbacks, which gRPC makes one at a time.
   */
  private byte[] held;

  /** A one-request call got a second message and is refused; later messages are dropped. */
  private boolean tooMany;

  /**
   * @param backends the channel to the backend of an address ({@link CallHook#backend()}), on this thread's
   *     loop
   */
  ForwardingCall(
      Function<String, Channel> backends,
      MethodDescriptor<byte[], Payload> method,
      ServerCall<byte[], Payload> serverCall,
      Metadata clientHeaders,
      HeaderFilter headers,
      CallHook hook,
      Executor pool,
      BufferedBytes buffered) {
    this.backends = backends;
    this.method = method;
    this.serverCall = serverCall;
    this.clientHeaders = clientHeaders;
    this.headers = headers;
    this.hook = hook;
    this.lane = new CallLane(pool);
    this.buffered = buffered;
  }

  void start() {
    // Let one more response message queue while the previous one is still on its way to the client,
    // so the backend connection keeps moving while the client's drains (gRPC's default, 32 KiB, is
    // less than one Arrow batch: each batch would wait for the one before to be fully written).
    serverCall.setOnReadyThreshold(RESPONSE_QUEUE_BYTES);
    serverCall.request(1);
  }

  @Override
  public void onMessage(byte[] message) {
    buffered.hold(message.length);
    if (method.getType().clientSendsOneMessage()) {
      if (tooMany) {
        buffered.release(message.length);
        return;
      }
      if (held == null) {
        held = message;
        serverCall.request(1); // the half-close, or a second message
        return;
      }
      // A second request: the server side registers every method as client-streaming
      // (ProxyRegistry), so it arrives here instead of making gRPC reset the stream, and the client
      // learns what it did wrong. Neither message reaches the backend.
      buffered.release(held.length + (long) message.length);
      held = null;
      tooMany = true;
      lane.run(() -> refuse(oneRequest("more than one"), null), false);
      return;
    }
    lane.run(() -> forwardRequest(message), offload(message));
  }

  @Override
  public void onHalfClose() {
    byte[] message = held;
    held = null;
    if (message == null) {
      lane.run(this::halfClose, false);
      return;
    }
    lane.run(
        () -> {
          forwardRequest(message);
          halfClose();
        },
        offload(message));
  }

  @Override
  public void onCancel() {
    if (held != null) {
      buffered.release(held.length);
      held = null;
    }
    lane.run(this::cancel, false);
  }

  /** Whether handling the message belongs on the worker pool rather than the event loop. */
  private boolean offload(byte[] message) {
    return message.length > INLINE_REQUEST_BYTES || hook.mayBlock(message);
  }

  /** Everything sent to the client has left the proxy. */
  @Override
  public void onComplete() {
    synchronized (lock) {
      countQueuedForClient(0);
    }
  }

  @Override
  public void onReady() {
    lane.run(this::clientReady, false);
  }

  /** Inspects, decides and forwards one request message; its bytes stop counting as buffered after. */
  private void forwardRequest(byte[] message) {
    try {
      inspectAndForward(message);
    } finally {
      buffered.release(message.length);
    }
  }

  private void inspectAndForward(byte[] message) {
    if (isServerClosed()) {
      return;
    }
    requests++;
    byte[] forward;
    try {
      forward = hook.onRequest(message);
      hook.onAccepted(forward);
    } catch (StatusException e) {
      refuse(e.getStatus(), e.getTrailers());
      return;
    } catch (RuntimeException e) {
      // Fail closed: a request the proxy could not process is never forwarded.
      log.error("{}: request processing failed; refusing the call", method.getBareMethodName(), e);
      refuse(Status.INTERNAL.withDescription("Sparkgate could not process this request"), null);
      return;
    }
    if (!startBackend()) {
      return;
    }
    clientCall.sendMessage(forward);
    synchronized (lock) {
      if (clientCall.isReady()) {
        serverCall.request(1);
      } else {
        requestOwed = true;
      }
    }
  }

  private void halfClose() {
    if (isServerClosed()) {
      return;
    }
    if (requests == 0 && method.getType().clientSendsOneMessage()) {
      refuse(oneRequest("no"), null);
      return;
    }
    try {
      hook.onHalfClose();
    } catch (StatusException e) {
      refuse(e.getStatus(), e.getTrailers());
      return;
    } catch (RuntimeException e) {
      log.error(
          "{}: end-of-stream processing failed; refusing the call", method.getBareMethodName(), e);
      refuse(Status.INTERNAL.withDescription("Sparkgate could not process this request"), null);
      return;
    }
    if (startBackend()) {
      clientCall.halfClose();
    }
  }

  private void cancel() {
    // The client went away or its deadline passed; the backend call is cancelled with it (the gRPC
    // Context does this too, but an explicit cancel also covers calls started outside the Context).
    boolean first;
    synchronized (lock) {
      first = !serverClosed;
      serverClosed = true;
      countQueuedForClient(0); // gRPC drops what was queued for the client
    }
    cancelBackend("client cancelled the call");
    if (first) {
      hook.onClose(Status.CANCELLED.withDescription("the client cancelled the call or went away"));
    }
  }

  private void clientReady() {
    synchronized (lock) {
      countQueuedForClient(0); // ready: the queue is below its threshold again
      if (responseOwed && clientCall != null) {
        responseOwed = false;
        clientCall.request(1);
      }
    }
  }

  /** Starts the backend call if needed; false when the call is over and nothing more may be sent. */
  private boolean startBackend() {
    if (backendCancelled || isServerClosed()) {
      return false;
    }
    if (clientCall == null) {
      // The hooks have chosen the backend by now (the route stage, from the first message).
      String address = hook.backend();
      ClientCall<byte[], Payload> call =
          backends.apply(address).newCall(method, CallOptions.DEFAULT);
      synchronized (lock) {
        clientCall = call;
      }
      Metadata backendHeaders =
          headers.toBackend(
              clientHeaders,
              address,
              serverCall.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
      hook.toBackend(backendHeaders);
      call.start(new BackendListener(), backendHeaders);
      call.request(1);
    }
    return true;
  }

  private void refuse(Status status, Metadata trailers) {
    closeServerCall(status, trailers == null ? new Metadata() : trailers);
    cancelBackend("refused by Sparkgate");
  }

  private Status oneRequest(String sent) {
    return Status.INVALID_ARGUMENT.withDescription(
        method.getBareMethodName() + " takes exactly one request message; this call sent " + sent);
  }

  private void cancelBackend(String why) {
    if (clientCall != null && !backendCancelled) {
      backendCancelled = true;
      clientCall.cancel(why, null);
    }
  }

  private boolean isServerClosed() {
    synchronized (lock) {
      return serverClosed;
    }
  }

  /** Sets what {@link #buffered} counts for the client-facing queue. */
  @GuardedBy("lock")
  private void countQueuedForClient(long bytes) {
    buffered.hold(bytes - queuedForClient);
    queuedForClient = bytes;
  }

  /** Closes the client's call once; later attempts (a racing backend close) are ignored. */
  private boolean closeServerCall(Status status, Metadata trailers) {
    synchronized (lock) {
      if (serverClosed) {
        return false;
      }
      serverClosed = true; // nothing more is sent to the client from here on
    }
    // Outside the lock, before the client sees the status: the client may start its next call as
    // soon
    // as it does, and that call must meet the state this one's answer changed.
    try {
      hook.onClosing(status);
    } catch (RuntimeException e) {
      log.error("{}: a hook failed as the call closed", method.getBareMethodName(), e);
    }
    synchronized (lock) {
      serverCall.close(status, trailers);
    }
    hook.onClose(status);
    return true;
  }

  /** Backend to client. */
  private final class BackendListener extends ClientCall.Listener<Payload> {
    @Override
    public void onHeaders(Metadata headers) {
      synchronized (lock) {
        if (!serverClosed) {
          serverCall.sendHeaders(headers);
        }
      }
    }

    @Override
    public void onMessage(Payload message) {
      int length = message.length();
      buffered.hold(length);
      try {
        forwardResponse(message);
      } finally {
        buffered.release(length);
      }
    }

    private void forwardResponse(Payload message) {
      Payload forward;
      try {
        forward = hook.onResponse(message);
      } catch (RuntimeException e) {
        message.release();
        log.error(
            "{}: response processing failed; cancelling the call", method.getBareMethodName(), e);
        closeServerCall(
            Status.INTERNAL.withDescription("Sparkgate could not process the server's response"),
            new Metadata());
        clientCall.cancel("response processing failed", e);
        return;
      }
      synchronized (lock) {
        try {
          if (serverClosed) {
            return;
          }
          int sent = forward.length();
          serverCall.sendMessage(forward);
          if (serverCall.isReady()) {
            clientCall.request(1);
          } else {
            responseOwed = true;
            // The client takes results slower than the backend sends them. The queue is full
            // (the threshold at least, the threshold and this message at most) until it reads on.
            countQueuedForClient((long) RESPONSE_QUEUE_BYTES + sent);
          }
        } finally {
          // Sent payloads are released by gRPC; this covers a call that closed meanwhile, or a send
          // that threw.
          forward.release();
          if (forward != message) {
            message.release();
          }
        }
      }
    }

    @Override
    public void onClose(Status status, Metadata trailers) {
      // Status, description and trailers (grpc-status-details-bin: Spark's error class, SQLSTATE
      // and the FetchErrorDetails handle) pass through untouched.
      closeServerCall(backendProtocolError(status), trailers);
    }

    @Override
    public void onReady() {
      synchronized (lock) {
        if (requestOwed) {
          requestOwed = false;
          serverCall.request(1);
        }
      }
    }
  }

  /**
   * A backend that broke HTTP/2 (garbage for frames, an invalid frame) fails the proxy's own client transport,
   * which says {@code INTERNAL: http2 exception}: to the client that reads as a bug of the server. It is the
   * connection to the Spark server that failed, so the client gets UNAVAILABLE, saying so. Only a status that
   * carries an {@code Http2Exception} as its cause was made here; a backend's own INTERNAL (Spark's errors)
   * arrives without a cause and passes untouched.
   */
  static Status backendProtocolError(Status status) {
    if (status.getCode() == Status.Code.INTERNAL
        && (status.getCause()
                instanceof io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Exception
            || "http2 exception".equals(status.getDescription()))) {
      return Status.UNAVAILABLE
          .withDescription(
              "the connection to the Spark Connect server failed: it broke the HTTP/2 protocol")
          .withCause(status.getCause());
    }
    return status;
  }
}
