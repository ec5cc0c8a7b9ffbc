package io.sparkgate.cli;

import picocli.CommandLine;

final class VersionProvider implements CommandLine.IVersionProvider {
  @Override
  public String[] getVersion() {
    String version = Main.class.getPackage().getImplementationVersion();
    return new String[] {"sparkgate " + (version == null ? "(development build)" : version)};
  }
}
