package io.sparkgate.tracing;

import io.grpc.CallOptions;
import io.grpc.ChannelCredentials;
import io.grpc.ClientCall;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.common.export.GrpcResponse;
import io.opentelemetry.sdk.common.export.GrpcSender;
import io.opentelemetry.sdk.common.export.GrpcSenderConfig;
import io.opentelemetry.sdk.common.export.GrpcStatusCode;
import io.opentelemetry.sdk.common.export.MessageWriter;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * OTLP/gRPC export over the proxy's own grpc-java: the SDK's senders are OkHttp (with Kotlin) or a module
 * the registry does not serve, and the proxy already carries a gRPC client. One channel per exporter; each
 * export is one unary call under the exporter's timeout. Retries are the batch processor's business: a
 * batch that fails is dropped and counted by the SDK, never queued behind the calls.
 */
final class GrpcJavaSender implements GrpcSender {
  private static final MethodDescriptor.Marshaller<MessageWriter> REQUEST =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(MessageWriter writer) {
          ByteArrayOutputStream out = new ByteArrayOutputStream(writer.getContentLength());
          try {
            writer.writeMessage(out);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
          return new ByteArrayInputStream(out.toByteArray());
        }

        @Override
        public MessageWriter parse(InputStream stream) {
          throw new UnsupportedOperationException("requests are only sent");
        }
      };

  private static final MethodDescriptor.Marshaller<byte[]> RESPONSE =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  private final ManagedChannel channel;
  private final MethodDescriptor<MessageWriter, byte[]> method;
  private final GrpcSenderConfig config;

  GrpcJavaSender(GrpcSenderConfig config) {
    this.config = config;
    URI endpoint = config.getEndpoint();
    boolean tls = "https".equalsIgnoreCase(endpoint.getScheme());
    ChannelCredentials credentials =
        !tls
            ? InsecureChannelCredentials.create()
            : config.getTrustManager() == null
                ? TlsChannelCredentials.create()
                : TlsChannelCredentials.newBuilder().trustManager(config.getTrustManager()).build();
    int port = endpoint.getPort() >= 0 ? endpoint.getPort() : tls ? 443 : 80;
    this.channel = Grpc.newChannelBuilderForAddress(endpoint.getHost(), port, credentials).build();
    this.method =
        MethodDescriptor.<MessageWriter, byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(config.getFullMethodName())
            .setRequestMarshaller(REQUEST)
            .setResponseMarshaller(RESPONSE)
            .build();
  }

  @Override
  public void send(
      MessageWriter request, Consumer<GrpcResponse> onResponse, Consumer<Throwable> onError) {
    Metadata headers = new Metadata();
    Map<String, List<String>> extra = config.getHeadersSupplier().get();
    if (extra != null) {
      extra.forEach(
          (name, values) -> {
            Metadata.Key<String> key = Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
            values.forEach(v -> headers.put(key, v));
          });
    }
    CallOptions options = CallOptions.DEFAULT;
    if (config.getTimeout() != null && !config.getTimeout().isZero()) {
      options = options.withDeadlineAfter(config.getTimeout().toNanos(), TimeUnit.NANOSECONDS);
    }
    ClientCall<MessageWriter, byte[]> call = channel.newCall(method, options);
    try {
      call.start(
          new ClientCall.Listener<>() {
            private byte[] body = new byte[0];

            @Override
            public void onMessage(byte[] message) {
              body = message;
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
              onResponse.accept(new Response(status, body));
            }
          },
          headers);
      call.request(1);
      call.sendMessage(request);
      call.halfClose();
    } catch (RuntimeException e) {
      call.cancel("export failed", e);
      onError.accept(e);
    }
  }

  @Override
  public CompletableResultCode shutdown() {
    channel.shutdownNow();
    return CompletableResultCode.ofSuccess();
  }

  private record Response(Status status, byte[] body) implements GrpcResponse {
    @Override
    public GrpcStatusCode getStatusCode() {
      return GrpcStatusCode.fromValue(status.getCode().value());
    }

    @Override
    public String getStatusDescription() {
      return status.getDescription() == null ? "" : status.getDescription();
    }

    @Override
    public byte[] getResponseMessage() {
      return body;
    }
  }
}
