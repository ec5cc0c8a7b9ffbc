package io.sparkgate.inspect;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the backend is: Spark version, session extensions, catalogs (name to implementation class) and the
 * default catalog. Policies key on it (e.g. Hudi and Iceberg extensions loaded together).
 */
public record BackendProfile(
    String sparkVersion, List<String> extensions, Map<String, String> catalogs, String defaultCatalog) {

  public static final BackendProfile UNKNOWN = new BackendProfile("", List.of(), Map.of(), SessionView.SESSION_CATALOG);

  public BackendProfile {
    sparkVersion = sparkVersion == null ? "" : sparkVersion;
    extensions = List.copyOf(extensions);
    catalogs = Map.copyOf(catalogs);
    defaultCatalog = defaultCatalog == null || defaultCatalog.isEmpty() ? SessionView.SESSION_CATALOG : defaultCatalog;
  }

  public boolean hasExtension(String className) {
    return extensions.contains(className);
  }

  /** Catalog names a multi-part table name can start with. */
  public Set<String> catalogNames() {
    return catalogs.keySet();
  }

  /** A fresh session on this backend. */
  public SessionView freshSession() {
    return SessionView.of(defaultCatalog, "default", catalogNames());
  }

  /** This profile with each non-null override applied (configuration pins what the backend reports). */
  public BackendProfile with(String version, List<String> exts, Map<String, String> cats, String defaultCat) {
    return new BackendProfile(version != null ? version : sparkVersion, exts != null ? exts : extensions,
        cats != null ? cats : catalogs, defaultCat != null ? defaultCat : defaultCatalog);
  }
}
