package io.sparkgate.call;

import io.grpc.Attributes;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.sparkgate.forward.ProxyRegistry;
import io.sparkgate.inspect.Facts;
import io.sparkgate.inspect.RequestHead;
import io.sparkgate.inspect.SessionView;
import java.net.SocketAddress;
import java.util.Objects;
import javax.net.ssl.SSLSession;

/**
 * One Spark Connect call as it travels through the stages: what the client sent with it (method, headers,
 * connection), and what each stage learnt (the principal, the request head and facts, the decision, the
 * route) for the stages after it and for the audit record, which is built from this object when the call
 * ends ({@link AuditEvent}). Each field has one writer, the stage that owns it; requests and responses are
 * handled on different threads, so every field is volatile.
 */
public final class Call {
  private final String method;
  private final Metadata headers;
  private final Attributes transport;
  private final AuditEvent audit = new AuditEvent();
  private volatile Principal principal;
  private volatile RequestHead head = RequestHead.NONE;
  private volatile Facts facts = Facts.empty();
  private volatile SessionView session = SessionView.DEFAULT;
  private volatile Decided decided;
  private volatile String pool;
  private volatile Route route;
  private volatile StageTimes stageTimes;

  /** What the decide stage concluded for the latest request message: the effect's label and its rule. */
  public record Decided(String effect, String rule) {}

  /**
   * @param method the bare method name ({@code ExecutePlan})
   * @param transport the connection's attributes (remote address, TLS session, per-connection state)
   */
  public Call(String method, Metadata headers, Attributes transport) {
    this.method = Objects.requireNonNull(method, "method");
    this.headers = Objects.requireNonNull(headers, "headers");
    this.transport = Objects.requireNonNull(transport, "transport");
  }

  /** A call as tools and tests make one: no headers, no connection. */
  public static Call of(String method) {
    return new Call(method, new Metadata(), Attributes.EMPTY);
  }

  public String method() {
    return method;
  }

  public Metadata headers() {
    return headers;
  }

  public Attributes transport() {
    return transport;
  }

  public SocketAddress remoteAddress() {
    return transport.get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
  }

  public SSLSession sslSession() {
    return transport.get(Grpc.TRANSPORT_ATTR_SSL_SESSION);
  }

  public AuditEvent audit() {
    return audit;
  }

  /** The verified identity; null until the authenticate stage has run (or when it refused the call). */
  public Principal principal() {
    return principal;
  }

  public void principal(Principal principal) {
    this.principal = Objects.requireNonNull(principal, "principal");
  }

  /** The first request message's head; {@link RequestHead#NONE} before the head stage read it. */
  public RequestHead head() {
    return head;
  }

  /** Set by the head stage, once, from the first request message. */
  public void head(RequestHead head) {
    this.head = Objects.requireNonNull(head, "head");
  }

  /** The facts of the request message being handled (or of the end of an AddArtifacts stream). */
  public Facts facts() {
    return facts;
  }

  /** The session the latest request message was inspected in (its catalog, temporary functions ...). */
  public SessionView session() {
    return session;
  }

  /** Set by the inspect stage for each request message. */
  public void inspected(Facts facts, SessionView session) {
    this.facts = Objects.requireNonNull(facts, "facts");
    this.session = Objects.requireNonNull(session, "session");
  }

  /** The decide stage's conclusion on the latest message; null before it decided. */
  public Decided decided() {
    return decided;
  }

  public void decided(String effect, String rule) {
    this.decided = new Decided(effect, rule);
  }

  /** The host the client dialled ({@code :authority}); empty when the transport did not say. */
  public String authority() {
    String authority = transport.get(ProxyRegistry.AUTHORITY);
    return authority == null ? "" : authority;
  }

  /** The pool that serves the call: its policy decides; null until the route stage chose. */
  public String pool() {
    return pool;
  }

  public void pool(String pool) {
    this.pool = Objects.requireNonNull(pool, "pool");
  }

  /** Where the call goes; null until the route stage chose. */
  public Route route() {
    return route;
  }

  public void route(Route route) {
    this.route = Objects.requireNonNull(route, "route");
    this.pool = route.pool();
  }

  /** Each stage's time on this call, when its trace span records; null otherwise. */
  public StageTimes stageTimes() {
    return stageTimes;
  }

  /** Set by the tracing stage, first, for a call whose span records. */
  public void stageTimes(StageTimes times) {
    this.stageTimes = Objects.requireNonNull(times, "times");
  }
}
