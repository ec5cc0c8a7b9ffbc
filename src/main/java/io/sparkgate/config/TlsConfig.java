package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * The proxy's TLS identity, and the CA that client certificates must chain to when mutual TLS is on.
 *
 * @param certFile PEM certificate chain, leaf first
 * @param keyFile PEM PKCS#8 private key (RSA or EC), readable by its owner only (mode 0600 or stricter)
 * @param clientCaFile PEM CA bundle; present means clients must present a certificate it signed
 * @param reloadInterval how often the files are checked for changes (picked up without a restart)
 */
public record TlsConfig(
    Path certFile, Path keyFile, Optional<Path> clientCaFile, Duration reloadInterval) {

  static TlsConfig read(YamlNode node) {
    node.allowOnly("cert_file", "key_file", "client_ca_file", "reload_interval");
    String hint =
        "the PEM files for the proxy's TLS identity (certs/make-dev-certs.sh makes a dev set), "
            + "or set listen.plaintext: true to run without TLS";
    Path cert =
        node.existingFile("cert_file")
            .orElseThrow(() -> node.errorAt("cert_file", "is required: " + hint));
    Path key =
        node.existingFile("key_file")
            .orElseThrow(() -> node.errorAt("key_file", "is required: " + hint));
    PrivateKeyFile.check(node, "key_file", key);
    return new TlsConfig(
        cert,
        key,
        node.existingFile("client_ca_file"),
        node.duration(
            "reload_interval", Duration.ofMinutes(1), Duration.ofMillis(100), Duration.ofDays(1)));
  }
}
