package io.sparkgate.inspect;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the backend is: Spark version, session extensions, catalogs (name to implementation class), the
 * default catalog, the scheme of its default file system (what a path without a scheme reaches) and the
 * settings that change how it parses strings. Policies key on it (e.g. Hudi and Iceberg extensions loaded
 * together).
 */
public record BackendProfile(
    String sparkVersion,
    List<String> extensions,
    Map<String, String> catalogs,
    String defaultCatalog,
    String defaultFs,
    ParserSettings parser) {

  public static final BackendProfile UNKNOWN =
      new BackendProfile("", List.of(), Map.of(), SessionView.SESSION_CATALOG);

  public BackendProfile {
    sparkVersion = sparkVersion == null ? "" : sparkVersion;
    extensions = List.copyOf(extensions);
    catalogs = Map.copyOf(catalogs);
    defaultCatalog =
        defaultCatalog == null || defaultCatalog.isEmpty()
            ? SessionView.SESSION_CATALOG
            : defaultCatalog;
    defaultFs = schemeOf(defaultFs);
    parser = parser == null ? ParserSettings.of(sparkVersion, Map.of()) : parser;
  }

  /** A profile whose parser settings are the version's defaults. */
  public BackendProfile(
      String sparkVersion,
      List<String> extensions,
      Map<String, String> catalogs,
      String defaultCatalog,
      String defaultFs) {
    this(sparkVersion, extensions, catalogs, defaultCatalog, defaultFs, null);
  }

  /** A profile whose default file system is Hadoop's default, the local one. */
  public BackendProfile(
      String sparkVersion,
      List<String> extensions,
      Map<String, String> catalogs,
      String defaultCatalog) {
    this(sparkVersion, extensions, catalogs, defaultCatalog, null);
  }

  /** {@code hdfs://nn:8020/} is {@code hdfs}; unset or unreadable is the local file system, the cautious reading. */
  static String schemeOf(String uri) {
    if (uri == null) return SessionView.LOCAL_FILE_SYSTEM;
    String u = uri.strip();
    int colon = u.indexOf(':');
    if (colon <= 0) return SessionView.LOCAL_FILE_SYSTEM;
    return u.substring(0, colon).toLowerCase(java.util.Locale.ROOT);
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
    return new SessionView.Fixed(
        defaultCatalog,
        "default",
        catalogNames(),
        null,
        defaultFs,
        Set.copyOf(extensions),
        Set.of(),
        Set.of(),
        parser);
  }

  /** This profile with each non-null override applied (configuration pins what the backend reports). */
  public BackendProfile with(
      String version, List<String> exts, Map<String, String> cats, String defaultCat, String fs) {
    return new BackendProfile(
        version != null ? version : sparkVersion,
        exts != null ? exts : extensions,
        cats != null ? cats : catalogs,
        defaultCat != null ? defaultCat : defaultCatalog,
        fs != null ? fs : defaultFs,
        parser);
  }
}
