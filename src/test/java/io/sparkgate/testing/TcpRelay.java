package io.sparkgate.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay that can make its clients vanish: {@link #killAll()} resets every connection (SO_LINGER 0),
 * as when a laptop drops off the network, so the far side sees no orderly HTTP/2 shutdown.
 */
public final class TcpRelay implements AutoCloseable {
  private final ServerSocket listener;
  private final InetSocketAddress target;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();

  public TcpRelay(int targetPort) throws IOException {
    this.target = new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort);
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::acceptLoop, "relay-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  public int port() {
    return listener.getLocalPort();
  }

  private void acceptLoop() {
    while (!listener.isClosed()) {
      try {
        Socket client = listener.accept();
        Socket upstream = new Socket(target.getAddress(), target.getPort());
        sockets.add(client);
        sockets.add(upstream);
        pipe(client, upstream);
        pipe(upstream, client);
      } catch (IOException e) {
        return;
      }
    }
  }

  private static void pipe(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              byte[] buf = new byte[64 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) >= 0) {
                  out.write(buf, 0, n);
                }
              } catch (IOException ignored) {
                // a killed connection ends here
              }
            },
            "relay-pipe");
    t.setDaemon(true);
    t.start();
  }

  /** Resets every relayed connection at once. */
  public void killAll() {
    for (Socket s : sockets) {
      try {
        s.setSoLinger(true, 0);
        s.close();
      } catch (IOException ignored) {
        // already gone
      }
    }
    sockets.clear();
  }

  @Override
  public void close() throws IOException {
    listener.close();
    killAll();
  }
}
