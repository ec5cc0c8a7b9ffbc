package io.sparkgate.inspect;

import com.google.protobuf.Message;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.sparkgate.proto.spark.AnalyzePlanRequest;
import io.sparkgate.proto.spark.AnalyzePlanResponse;
import io.sparkgate.proto.spark.ConfigRequest;
import io.sparkgate.proto.spark.ConfigResponse;
import io.sparkgate.proto.spark.KeyValue;
import io.sparkgate.proto.spark.UserContext;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Reads a {@link BackendProfile} from the backend over Spark Connect itself: AnalyzePlan spark_version,
 * Config get_all with prefix {@code spark.sql.catalog.}, and get_option for {@code spark.sql.extensions},
 * {@code spark.sql.defaultCatalog}, the default file system ({@code spark.hadoop.fs.defaultFS}, {@code
 * fs.defaultFS}) and the parser settings ({@link ParserSettings#KEYS}). Uses its own session id, so user
 * sessions are untouched.
 */
public final class BackendProfiler {
  static final String SERVICE = "spark.connect.SparkConnectService";
  private static final String CATALOG_PREFIX = "spark.sql.catalog.";

  private final Channel channel;
  private final String userId;
  private final long timeoutMillis;

  public BackendProfiler(Channel channel, String userId, long timeoutMillis) {
    this.channel = channel;
    this.userId = userId;
    if (timeoutMillis <= 0)
      throw new IllegalArgumentException("timeoutMillis must be positive, got " + timeoutMillis);
    this.timeoutMillis = timeoutMillis;
  }

  /** Reads the profile; throws io.grpc.StatusRuntimeException when the backend cannot be asked. */
  public BackendProfile read() {
    String session = UUID.randomUUID().toString();
    UserContext user = UserContext.newBuilder().setUserId(userId).build();
    AnalyzePlanResponse version =
        call(
            "AnalyzePlan",
            AnalyzePlanResponse.getDefaultInstance(),
            AnalyzePlanRequest.newBuilder()
                .setSessionId(session)
                .setUserContext(user)
                .setSparkVersion(AnalyzePlanRequest.SparkVersion.getDefaultInstance())
                .build());
    ConfigResponse all =
        config(
            session,
            user,
            ConfigRequest.Operation.newBuilder()
                .setGetAll(ConfigRequest.GetAll.newBuilder().setPrefix(CATALOG_PREFIX)));
    ConfigResponse options =
        config(
            session,
            user,
            ConfigRequest.Operation.newBuilder()
                .setGetOption(
                    ConfigRequest.GetOption.newBuilder()
                        .addKeys("spark.sql.extensions")
                        .addKeys("spark.sql.defaultCatalog")
                        .addKeys("spark.hadoop.fs.defaultFS")
                        .addKeys("fs.defaultFS")
                        .addAllKeys(ParserSettings.KEYS)));
    return fromResponses(
        version.getSparkVersion().getVersion(), all.getPairsList(), options.getPairsList());
  }

  static BackendProfile fromResponses(
      String version, List<KeyValue> catalogConfs, List<KeyValue> options) {
    Map<String, String> catalogs = new LinkedHashMap<>();
    for (KeyValue kv : catalogConfs) {
      // Spark's server answers get_all with prefix with the prefix STRIPPED from each key
      // ("iceberg", "iceberg.type"; seen on 3.5.7); accept the full key too. Options of a catalog
      // (<name>.<option>) also match the prefix; names have no dot.
      String key = kv.getKey();
      String rest =
          key.startsWith(CATALOG_PREFIX)
              ? key.substring(CATALOG_PREFIX.length())
              : key.startsWith("spark.") ? "" : key;
      if (!rest.isEmpty() && rest.indexOf('.') < 0 && kv.hasValue())
        catalogs.put(rest, kv.getValue());
    }
    List<String> extensions = new ArrayList<>();
    String defaultCatalog = null;
    String defaultFs = null;
    Map<String, String> parser = new HashMap<>();
    for (KeyValue kv : options) {
      if (!kv.hasValue()) continue;
      if (ParserSettings.KEYS.contains(kv.getKey())) parser.put(kv.getKey(), kv.getValue());
      if (kv.getKey().equals("spark.sql.extensions")) {
        for (String e : kv.getValue().split(",")) if (!e.isBlank()) extensions.add(e.strip());
      } else if (kv.getKey().equals("spark.sql.defaultCatalog")) {
        defaultCatalog = kv.getValue();
      } else if (kv.getKey().endsWith("fs.defaultFS") && defaultFs == null) {
        defaultFs = kv.getValue();
      }
    }
    // Unset in the session's conf means Hadoop's default (file:///) unless core-site.xml says
    // otherwise, which Spark's conf does not show: the local reading is the cautious one, and
    // backend.profile.default_fs pins it.
    return new BackendProfile(
        version,
        extensions,
        catalogs,
        defaultCatalog,
        defaultFs,
        ParserSettings.of(version, parser));
  }

  private ConfigResponse config(
      String session, UserContext user, ConfigRequest.Operation.Builder operation) {
    return call(
        "Config",
        ConfigResponse.getDefaultInstance(),
        ConfigRequest.newBuilder()
            .setSessionId(session)
            .setUserContext(user)
            .setOperation(operation)
            .build());
  }

  private <Req extends Message, Resp extends Message> Resp call(
      String method, Resp prototype, Req request) {
    MethodDescriptor<Req, Resp> md =
        MethodDescriptor.<Req, Resp>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, method))
            .setRequestMarshaller(new ProtoMarshaller<>(null))
            .setResponseMarshaller(new ProtoMarshaller<>(prototype))
            .build();
    return ClientCalls.blockingUnaryCall(
        channel,
        md,
        CallOptions.DEFAULT.withDeadlineAfter(timeoutMillis, TimeUnit.MILLISECONDS),
        request);
  }

  /** A marshaller for generated messages; the proxy itself forwards bytes and has no stubs. */
  static final class ProtoMarshaller<T extends Message> implements MethodDescriptor.Marshaller<T> {
    private final T prototype;

    ProtoMarshaller(T prototype) {
      this.prototype = prototype;
    }

    @Override
    public InputStream stream(T value) {
      return new ByteArrayInputStream(value.toByteArray());
    }

    @Override
    @SuppressWarnings("unchecked")
    public T parse(InputStream stream) {
      try {
        return (T) prototype.getParserForType().parseFrom(stream);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
