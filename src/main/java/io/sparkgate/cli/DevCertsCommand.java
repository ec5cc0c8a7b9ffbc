package io.sparkgate.cli;

import io.sparkgate.tls.DevCertificates;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code sparkgate dev-certs}: writes a throwaway CA, server and client certificates for local use. */
@Command(
    name = "dev-certs",
    mixinStandardHelpOptions = true,
    description = {
      "Generates development TLS material: a dev CA, a server certificate for localhost/127.0.0.1, "
          + "a client certificate for mTLS, and PKCS#12 stores for JVM clients.",
      "Private keys are written with 0600 permissions. For development only; never commit them."
    })
public final class DevCertsCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(
      names = "--out",
      paramLabel = "DIR",
      defaultValue = "certs/dev",
      description = "Output directory (default: ${DEFAULT-VALUE}). Existing files are overwritten.")
  Path out;

  @Option(
      names = "--key-type",
      paramLabel = "rsa|ec",
      defaultValue = "rsa",
      description = "Key type: rsa (RSA-2048) or ec (EC P-256). Default: ${DEFAULT-VALUE}.")
  String keyType;

  @Option(
      names = "--password",
      defaultValue = "changeit",
      description = "Password of truststore.p12 and client.p12 (default: ${DEFAULT-VALUE}).")
  String password;

  @Option(
      names = "--client-name",
      defaultValue = "dev-user",
      description =
          "CN of the client certificate, i.e. the mTLS principal (default: ${DEFAULT-VALUE}).")
  String clientName;

  @Option(
      names = "--client-san",
      paramLabel = "EMAIL|URI",
      description =
          "Optional subject alternative name for the client certificate: an e-mail address "
              + "or a URI such as spiffe://dev/dev-user.")
  String clientSan;

  @Option(
      names = "--days",
      defaultValue = "30",
      description = "Validity of every certificate in days (default: ${DEFAULT-VALUE}).")
  int days;

  /** Lets certs/make-dev-certs.sh run this without going through Main. */
  public static void main(String[] args) {
    System.exit(new CommandLine(new DevCertsCommand()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    DevCertificates.KeyType type;
    try {
      type = DevCertificates.KeyType.valueOf(keyType.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "--key-type must be rsa or ec, not '" + keyType + "'");
    }
    if (days < 1) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--days must be at least 1");
    }
    DevCertificates.Options options =
        DevCertificates.Options.defaults()
            .withKeyType(type)
            .withPassword(password)
            .withClientName(clientName)
            .withClientSan(clientSan)
            .withValidity(java.time.Duration.ofDays(days));
    DevCertificates.Generated g = DevCertificates.generate(out, options);

    PrintWriter w = spec.commandLine().getOut();
    w.printf("Wrote development TLS material (%s, valid %d days) to %s:%n", type, days, g.dir());
    w.printf("  %-16s dev CA certificate (trust this on clients)%n", name(g.caCert()));
    w.printf("  %-16s dev CA private key (0600)%n", name(g.caKey()));
    w.printf(
        "  %-16s server certificate chain for localhost, 127.0.0.1 -> tls.cert_file%n",
        name(g.serverCert()));
    w.printf("  %-16s server private key, PKCS#8 (0600) -> tls.key_file%n", name(g.serverKey()));
    w.printf("  %-16s client certificate chain, CN=%s%n", name(g.clientCert()), clientName);
    w.printf("  %-16s client private key, PKCS#8 (0600)%n", name(g.clientKey()));
    w.printf("  %-16s PKCS#12 trust store with the dev CA%n", name(g.trustStore()));
    w.printf("  %-16s PKCS#12 client key + certificate chain (0600)%n", name(g.clientKeyStore()));
    w.printf("For mTLS set tls.client_ca_file to %s.%n", g.caCert());
    w.printf("JVM Spark Connect client flags:%n");
    w.printf(
        "  -Djavax.net.ssl.trustStore=%s -Djavax.net.ssl.trustStoreType=PKCS12 "
            + "-Djavax.net.ssl.trustStorePassword=%s%n",
        g.trustStore().toAbsolutePath(), password);
    w.printf(
        "  with mTLS also: -Djavax.net.ssl.keyStore=%s -Djavax.net.ssl.keyStoreType=PKCS12 "
            + "-Djavax.net.ssl.keyStorePassword=%s%n",
        g.clientKeyStore().toAbsolutePath(), password);
    w.printf("These files are for development only; never commit them.%n");
    w.flush();
    return 0;
  }

  private static String name(Path p) {
    return p.getFileName().toString();
  }
}
