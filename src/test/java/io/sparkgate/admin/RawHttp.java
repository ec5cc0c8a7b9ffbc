package io.sparkgate.admin;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 written by hand on one socket, for what java.net.http will not send: pipelined, malformed,
 * oversized and trickled requests, and a look at whether the server kept the connection.
 */
final class RawHttp implements Closeable {
  /** One response: header names in lower case. */
  record Response(int status, Map<String, String> headers, String body) {
    String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  private final Socket socket;
  private final InputStream in;

  RawHttp(int port) throws IOException {
    socket = new Socket(InetAddress.getLoopbackAddress(), port);
    socket.setSoTimeout(10_000);
    in = new BufferedInputStream(socket.getInputStream());
  }

  RawHttp send(String text) throws IOException {
    return send(text.getBytes(StandardCharsets.ISO_8859_1));
  }

  RawHttp send(byte[] bytes) throws IOException {
    socket.getOutputStream().write(bytes);
    socket.getOutputStream().flush();
    return this;
  }

  /** The next response, with a body of its Content-Length. */
  Response read() throws IOException {
    return read(false);
  }

  /** The next response to a HEAD: its Content-Length describes a body that is not sent. */
  Response readHead() throws IOException {
    return read(true);
  }

  private Response read(boolean head) throws IOException {
    String status = line();
    if (status == null) throw new IOException("closed before a response");
    Map<String, String> headers = new LinkedHashMap<>();
    for (String h = line(); h != null && !h.isEmpty(); h = line()) {
      int colon = h.indexOf(':');
      headers.put(
          h.substring(0, colon).strip().toLowerCase(Locale.ROOT), h.substring(colon + 1).strip());
    }
    int length = head ? 0 : Integer.parseInt(headers.getOrDefault("content-length", "0"));
    byte[] body = in.readNBytes(length);
    int code = status.indexOf(' ') + 1;
    return new Response(
        Integer.parseInt(status.substring(code, code + 3)),
        headers,
        new String(body, StandardCharsets.UTF_8));
  }

  /** Whether the server closed the connection (end of stream or a reset) with nothing more sent. */
  boolean closedByServer() throws IOException {
    try {
      return in.read() == -1;
    } catch (SocketException reset) {
      return true;
    }
  }

  private String line() throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int b = in.read(); b != -1; b = in.read()) {
      if (b == '\n') {
        String s = out.toString(StandardCharsets.ISO_8859_1);
        return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
      }
      out.write(b);
    }
    return out.size() == 0 ? null : out.toString(StandardCharsets.ISO_8859_1);
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
