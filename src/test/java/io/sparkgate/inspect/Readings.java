package io.sparkgate.inspect;

/** The inspector's two readings of a request, which must agree: from its encoding, and from the parsed message. */
final class Readings {
  private Readings() {}

  /** What the proxy reads ({@code fromEncoding}), or the parsed reading it falls back to. */
  static Facts read(
      Inspector inspector,
      String method,
      byte[] request,
      SessionView session,
      ArtifactTracker tracker,
      boolean fromEncoding) {
    return fromEncoding
        ? inspector.inspect(method, request, session, tracker)
        : inspector.inspectParsed(method, request, SessionViews.fixed(session), tracker);
  }
}
