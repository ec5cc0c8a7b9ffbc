package io.sparkgate.inspect;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import io.sparkgate.proto.spark.Base;
import java.io.IOException;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

/** Parses a request message of a Spark Connect method, with protobuf's nesting limit raised to our bound. */
final class Requests {
  private Requests() {}

  private static final Map<String, Message> PROTOTYPES = new HashMap<>();

  static {
    for (MethodDescriptor md :
        Base.getDescriptor().findServiceByName("SparkConnectService").getMethods()) {
      String javaName = "io.sparkgate.proto.spark." + md.getInputType().getName();
      try {
        Class<?> c = Class.forName(javaName);
        PROTOTYPES.put(md.getName(), (Message) c.getMethod("getDefaultInstance").invoke(null));
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError("no generated class " + javaName);
      }
    }
  }

  /** "spark.connect.SparkConnectService/ExecutePlan" or "ExecutePlan" to "ExecutePlan". */
  static String shortName(String method) {
    int slash = method.lastIndexOf('/');
    return slash < 0 ? method : method.substring(slash + 1);
  }

  /** The request prototype of every method. */
  static Collection<Message> prototypes() {
    return PROTOTYPES.values();
  }

  /** Every method's bare name and request prototype. */
  static Map<String, Message> byMethod() {
    return Collections.unmodifiableMap(PROTOTYPES);
  }

  /** The prototype for a method, or null for a method the protos do not know. */
  static Message prototype(String method) {
    return PROTOTYPES.get(shortName(method));
  }

  static Message parse(Message prototype, byte[] bytes, int recursionLimit) throws IOException {
    CodedInputStream in = CodedInputStream.newInstance(bytes);
    in.setRecursionLimit(recursionLimit);
    Parser<? extends Message> parser = prototype.getParserForType();
    return parser.parseFrom(in);
  }

  /** A message that does not parse: too deep, or malformed. Either way, a fact. */
  static void parseFailure(
      InvalidProtocolBufferException e, String where, InspectorConfig config, FactSink sink) {
    String msg = String.valueOf(e.getMessage());
    if (msg.contains("too many levels of nesting")) {
      sink.fact(Fact.Kind.UNCLASSIFIED, "plan_too_deep")
          .put("where", where)
          .put("limit", config.maxDepth())
          .emit();
    } else {
      sink.fact(Fact.Kind.UNCLASSIFIED, "unparseable_request")
          .put("where", where)
          .put("detail", msg)
          .emit();
    }
  }
}
