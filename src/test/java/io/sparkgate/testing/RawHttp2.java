package io.sparkgate.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersEncoder;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2Headers;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

/**
 * An HTTP/2 client that sends whatever frames a test asks for, in any order, on a real socket: the attacker
 * of the abuse tests. Header blocks are HPACK-encoded by Netty's codec (unshaded, test scope); frames are
 * laid out here, so sequences no well-behaved encoder would produce (endless CONTINUATION, zero window
 * updates) can be sent.
 */
public final class RawHttp2 implements AutoCloseable {
  public static final int DATA = 0x0;
  public static final int HEADERS = 0x1;
  public static final int RST_STREAM = 0x3;
  public static final int SETTINGS = 0x4;
  public static final int PING = 0x6;
  public static final int GOAWAY = 0x7;
  public static final int WINDOW_UPDATE = 0x8;
  public static final int CONTINUATION = 0x9;
  public static final int END_STREAM = 0x1;
  public static final int END_HEADERS = 0x4;
  public static final int ACK = 0x1;

  private static final byte[] PREFACE =
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  /** One frame the server sent. */
  public record Frame(int type, int flags, int stream, byte[] payload) {
    /** A GOAWAY's or RST_STREAM's error code. */
    public int errorCode() {
      int at = type == GOAWAY ? 4 : 0;
      return ((payload[at] & 0xff) << 24)
          | ((payload[at + 1] & 0xff) << 16)
          | ((payload[at + 2] & 0xff) << 8)
          | (payload[at + 3] & 0xff);
    }

    /** A GOAWAY's debug data. */
    public String debug() {
      return new String(payload, 8, payload.length - 8, StandardCharsets.US_ASCII);
    }
  }

  private final Socket socket;
  private final DataInputStream in;
  private final OutputStream out;
  private final DefaultHttp2HeadersEncoder hpack = new DefaultHttp2HeadersEncoder();

  private RawHttp2(Socket socket) throws IOException {
    this.socket = socket;
    this.in = new DataInputStream(socket.getInputStream());
    this.out = new BufferedOutputStream(socket.getOutputStream(), 64 * 1024);
  }

  /**
   * Connects to 127.0.0.1:{@code port} from {@code local} (a loopback address of the test's choice, so that a
   * per-address limit tells attacker and good client apart), with a small receive buffer when asked (a peer
   * that does not read).
   */
  public static RawHttp2 connect(InetAddress local, int port, int receiveBuffer)
      throws IOException {
    Socket s = new Socket();
    if (receiveBuffer > 0) {
      s.setReceiveBufferSize(receiveBuffer);
    }
    s.bind(new InetSocketAddress(local, 0));
    s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5000);
    s.setSoTimeout(10_000);
    return new RawHttp2(s);
  }

  /**
   * The client preface and an empty SETTINGS; then, once the server's SETTINGS has arrived, its ACK (the
   * server's limits, such as its stream limit, apply from then on).
   */
  public RawHttp2 preface() throws IOException {
    out.write(PREFACE);
    frame(SETTINGS, 0, 0, new byte[0]);
    flush();
    for (Frame f = read(); ; f = read()) {
      if (f == null) {
        throw new IOException("the server closed the connection before its SETTINGS");
      }
      if (f.type() == SETTINGS && (f.flags() & ACK) == 0) {
        break;
      }
    }
    frame(SETTINGS, ACK, 0, new byte[0]);
    flush();
    return this;
  }

  public void frame(int type, int flags, int stream, byte[] payload) throws IOException {
    frame(type, flags, stream, payload, 0, payload.length);
  }

  public void frame(int type, int flags, int stream, byte[] payload, int offset, int length)
      throws IOException {
    out.write(length >>> 16);
    out.write(length >>> 8);
    out.write(length);
    out.write(type);
    out.write(flags);
    out.write((stream >>> 24) & 0x7f);
    out.write(stream >>> 16);
    out.write(stream >>> 8);
    out.write(stream);
    out.write(payload, offset, length);
  }

  public void flush() throws IOException {
    out.flush();
  }

  /** A gRPC request's header block for {@code method} (full name), plus {@code extra} headers, HPACK-encoded. */
  public byte[] requestHeaders(String method, Map<String, String> extra) {
    Http2Headers h =
        new DefaultHttp2Headers()
            .method("POST")
            .scheme("http")
            .authority("localhost")
            .path("/" + method)
            .add("content-type", "application/grpc")
            .add("te", "trailers");
    extra.forEach(h::add);
    ByteBuf buf = Unpooled.buffer();
    try {
      hpack.encodeHeaders(0, h, buf);
      byte[] bytes = new byte[buf.readableBytes()];
      buf.readBytes(bytes);
      return bytes;
    } catch (Http2Exception e) {
      throw new IllegalStateException(e);
    } finally {
      buf.release();
    }
  }

  /** A header block in a HEADERS frame and as many CONTINUATION frames as 16 KiB frames need. */
  public void headers(int stream, byte[] block, boolean endStream) throws IOException {
    int max = 16 * 1024;
    int first = Math.min(max, block.length);
    int flags = (endStream ? END_STREAM : 0) | (first == block.length ? END_HEADERS : 0);
    frame(HEADERS, flags, stream, block, 0, first);
    for (int at = first; at < block.length; at += max) {
      int n = Math.min(max, block.length - at);
      frame(CONTINUATION, at + n == block.length ? END_HEADERS : 0, stream, block, at, n);
    }
  }

  public static byte[] int32(long value) {
    return new byte[] {
      (byte) (value >>> 24), (byte) (value >>> 16), (byte) (value >>> 8), (byte) value
    };
  }

  /** The next frame, or null once the server has closed the connection. */
  public Frame read() throws IOException {
    byte[] head = new byte[9];
    try {
      in.readFully(head);
      int length = ((head[0] & 0xff) << 16) | ((head[1] & 0xff) << 8) | (head[2] & 0xff);
      byte[] payload = new byte[length];
      in.readFully(payload);
      int stream =
          ((head[5] & 0x7f) << 24)
              | ((head[6] & 0xff) << 16)
              | ((head[7] & 0xff) << 8)
              | (head[8] & 0xff);
      return new Frame(head[3] & 0xff, head[4] & 0xff, stream, payload);
    } catch (EOFException | SocketException closed) {
      return null;
    }
  }

  /**
   * Reads until the server sends GOAWAY and closes the connection; the GOAWAY (null if it closed without
   * one). Fails if the connection is still open after {@code within}.
   */
  public Frame awaitGoawayAndClose(Duration within) throws IOException {
    socket.setSoTimeout((int) within.toMillis());
    Frame goaway = null;
    try {
      for (Frame f = read(); f != null; f = read()) {
        if (f.type() == GOAWAY && goaway == null) {
          goaway = f;
        }
      }
    } catch (SocketTimeoutException e) {
      throw new AssertionError(
          "the server kept the connection open for "
              + within
              + (goaway == null ? "" : " after " + goaway.debug()));
    } catch (SocketException reset) {
      // A close with our frames still unread by the server is a reset: closed all the same, after
      // the
      // GOAWAY when one was read.
      if (goaway == null) throw reset;
    }
    return goaway;
  }

  /** Whether the server has closed the connection: a read sees the end within {@code within}. */
  public boolean closedWithin(Duration within) throws IOException {
    socket.setSoTimeout((int) within.toMillis());
    try {
      byte[] buf = new byte[4096];
      while (in.read(buf) >= 0) {
        // discard
      }
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (SocketException reset) {
      return true;
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
