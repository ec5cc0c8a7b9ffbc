package io.sparkgate.config;

import io.sparkgate.yaml.YamlNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refuses a TLS private key that group or others may read: another account on the host could copy it and
 * impersonate the proxy. Checked on the permission bits, not by trying to read, because the proxy often runs
 * as root, which reads anything. One exception, PostgreSQL's: a key owned by root may be readable by its
 * group (mode 0640 or 0440), never writable by it.
 *
 * <p>A file system without POSIX attributes (Windows, some network mounts) has no bits to check; the key is
 * then accepted with a warning, since refusing would make those hosts unusable and their ACLs are the
 * operator's to set.
 */
final class PrivateKeyFile {
  private static final Logger log = LoggerFactory.getLogger(PrivateKeyFile.class);

  private static final Set<PosixFilePermission> OTHERS =
      EnumSet.of(
          PosixFilePermission.OTHERS_READ,
          PosixFilePermission.OTHERS_WRITE,
          PosixFilePermission.OTHERS_EXECUTE);
  private static final Set<PosixFilePermission> GROUP =
      EnumSet.of(
          PosixFilePermission.GROUP_READ,
          PosixFilePermission.GROUP_WRITE,
          PosixFilePermission.GROUP_EXECUTE);

  private PrivateKeyFile() {}

  /** {@code key} of {@code node} names {@code file}; throws naming both when the file is too open. */
  static void check(YamlNode node, String key, Path file) {
    PosixFileAttributeView view = Files.getFileAttributeView(file, PosixFileAttributeView.class);
    if (view == null) {
      log.warn(
          "{}: {} is on a file system without POSIX permissions; make sure only the proxy's account"
              + " can read it",
          key,
          file);
      return;
    }
    PosixFileAttributes attributes;
    try {
      attributes = view.readAttributes();
    } catch (IOException e) {
      throw node.errorAt(key, "cannot read the permissions of " + file + ": " + e.getMessage());
    }
    Set<PosixFilePermission> perms = attributes.permissions();
    boolean others = perms.stream().anyMatch(OTHERS::contains);
    boolean group = perms.stream().anyMatch(GROUP::contains);
    // PostgreSQL's rule: a root-owned key may be group-readable (0640), which is how Debian's
    // ssl-cert group and Kubernetes secrets under fsGroup (mode 0440) hand a key to a service
    // account.
    boolean rootGroupRead =
        attributes.owner().getName().equals("root")
            && perms.contains(PosixFilePermission.GROUP_READ)
            && !perms.contains(PosixFilePermission.GROUP_WRITE)
            && !perms.contains(PosixFilePermission.GROUP_EXECUTE);
    if (others || (group && !rootGroupRead)) {
      throw node.errorAt(
          key,
          "private key "
              + file
              + " is accessible to "
              + (others ? "others" : "its group")
              + " (mode "
              + PosixFilePermissions.toString(perms)
              + "): run chmod 600 "
              + file);
    }
  }
}
