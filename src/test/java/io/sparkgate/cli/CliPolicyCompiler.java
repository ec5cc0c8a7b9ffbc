package io.sparkgate.cli;

import io.sparkgate.policy.PolicyCompiler;

/** The compiler {@code sparkgate policy} uses, for tests elsewhere that read the shipped policies as it does. */
public final class CliPolicyCompiler {
  private CliPolicyCompiler() {}

  public static PolicyCompiler get() {
    return PolicyCommand.compiler();
  }
}
