package io.sparkgate.admin;

/** Answers requests to one path of the admin listener. It may block: handlers run off the network thread. */
@FunctionalInterface
public interface AdminHandler {
  AdminResponse handle(AdminRequest request) throws Exception;

  /** {@code handler} for GET (and HEAD); any other method is answered 405. */
  static AdminHandler getOnly(AdminHandler handler) {
    return r -> r.method().equals("GET") ? handler.handle(r) : AdminResponse.text(405, "use GET\n");
  }
}
