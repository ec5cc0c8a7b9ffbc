package io.sparkgate.cli;

import io.sparkgate.tls.ClientTls;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import picocli.CommandLine.Option;

/**
 * Where the admin listener is and how the operator proves who they are, shared by the {@code admin} commands.
 * The token is read from a file only: on the command line it would show in {@code ps} and shell history.
 */
final class AdminOptions {
  @Option(
      names = "--url",
      required = true,
      paramLabel = "URL",
      description =
          "The admin listener, e.g. https://proxy.example.com:9464 (http:// on loopback only).")
  String url;

  @Option(
      names = "--token-file",
      paramLabel = "FILE",
      defaultValue = "${env:SPARKGATE_ADMIN_TOKEN_FILE}",
      description =
          "A file holding the admin token (the proxy's admin.token_file); default"
              + " $SPARKGATE_ADMIN_TOKEN_FILE.")
  Path tokenFile;

  @Option(
      names = "--ca-file",
      paramLabel = "PEM",
      description = "The CA of the listener's certificate (admin.tls); default the JVM's CAs.")
  Path caFile;

  @Option(
      names = "--cert-file",
      paramLabel = "PEM",
      description =
          "A client certificate to present, for a listener with admin.tls.client_ca_file.")
  Path certFile;

  @Option(names = "--key-file", paramLabel = "PEM", description = "The PKCS#8 key of --cert-file.")
  Path keyFile;

  AdminClient client() {
    if ((certFile == null) != (keyFile == null)) {
      throw new Refused("give --cert-file and --key-file together, or neither");
    }
    SSLContext tls = null;
    if (caFile != null || certFile != null) {
      try {
        tls =
            ClientTls.context(
                Optional.ofNullable(caFile),
                Optional.ofNullable(certFile),
                Optional.ofNullable(keyFile));
      } catch (ClientTls.ClientTlsException e) {
        throw new Refused(e.getMessage());
      }
    }
    return new AdminClient(url, token(), tls);
  }

  /** The file's one line; the message names the file, never what it holds. */
  private Optional<String> token() {
    if (tokenFile == null) return Optional.empty();
    String text;
    try {
      text = Files.readString(tokenFile).strip();
    } catch (NoSuchFileException e) {
      throw new Refused("--token-file " + tokenFile + ": no such file");
    } catch (IOException e) {
      throw new Refused("--token-file " + tokenFile + ": cannot read it: " + e.getMessage());
    }
    if (text.isEmpty() || text.contains("\n")) {
      throw new Refused("--token-file " + tokenFile + " must hold exactly one line, the token");
    }
    return Optional.of(text);
  }
}
