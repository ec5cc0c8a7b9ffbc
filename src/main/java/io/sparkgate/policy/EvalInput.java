package io.sparkgate.policy;

import io.sparkgate.inspect.BackendProfile;
import io.sparkgate.inspect.Facts;
import java.util.List;
import java.util.Objects;

/**
 * What one decision is made on: the RPC (bare name), who called, the request's facts (already enriched),
 * and the backend profile, or null while it is not known yet.
 */
record EvalInput(
    String rpc,
    String principal,
    List<String> groups,
    String tenant,
    Facts facts,
    BackendProfile profile) {
  EvalInput {
    Objects.requireNonNull(rpc, "rpc");
    principal = principal == null ? "" : principal;
    groups = List.copyOf(groups);
    tenant = tenant == null ? "" : tenant;
    Objects.requireNonNull(facts, "facts");
  }
}
